"""ripgrep in the readers' sandbox without paying a new sandbox for every search.

Starting bubblewrap (a user and mount namespace, a dozen mounts) costs about 10 ms, as much as
ripgrep needs to find the first hundred matches in a 100k-file tree. So one sandbox, built with
exactly the flags of :func:`k1412_ls.tools.sandbox.command_sandbox.reader_argv`, is kept: a small spawner
(:mod:`k1412_ls.tools.sandbox.reader_spawner`) lives inside it and starts each ripgrep there, handing its
output straight to the host through pipes passed over a unix socket. Every ripgrep it starts sees
what a ripgrep in a fresh sandbox would.

It is reused only while nothing it was built from changed:

* the flags ``reader_argv`` gives *now* must equal the ones it was built with (a hidden path
  created since, a new hidden path, another workspace: a fresh sandbox);
* before each start the spawner checks, from inside, that every covered path is still covered and
  the workspace root still names the directory mounted at start (see the spawner); otherwise it
  answers ``stale`` and a fresh sandbox is built;
* it is at most :data:`MAX_AGE_S` old, so mounts made or removed on the host later are seen soon;
  it also ends by itself once older than that or unused for :data:`IDLE_S`, so an idle server keeps
  no extra processes.

When no such sandbox can be kept (the spawner cannot start), ripgrep runs in a fresh sandbox per
search as before. Either way it runs under the system-call filter of a network-off command
(``tools.sandbox.seccomp``), the spawner with it.
"""

from __future__ import annotations

import json
import os
import select
import signal
import socket
import subprocess
import sys
import threading
import time
from pathlib import Path
from typing import IO, Protocol

from k1412_ls.tools.sandbox.covers import cover_checks
from k1412_ls.tools.sandbox.seccomp import command_filter, filter_fd

MAX_AGE_S = 120.0
IDLE_S = 30.0
CHECK_EVERY_S = 5.0
READY_TIMEOUT_S = 10.0
RETRY_AFTER_FAILURE_S = 60.0
SPAWNER = Path(__file__).with_name("reader_spawner.py")


class ReaderProcess(Protocol):
    """What the search needs of a started ripgrep: a :class:`subprocess.Popen` or a :class:`SandboxedProcess`."""

    stdout: IO[bytes] | None
    stderr: IO[bytes] | None

    def poll(self) -> int | None: ...

    def kill(self) -> None: ...

    def wait(self) -> int: ...


class SandboxedProcess:
    """A ripgrep the spawner starts: its pipes here, its fate over its reply socket.

    The search reads the pipes at once, without waiting for the spawner's first answer: the
    answers (``pid``, then ``code``; or ``stale`` / ``error`` when nothing started, and the pipes
    simply close) are read by :meth:`poll` and :meth:`wait`. After ``stale`` the caller searches
    again in a fresh sandbox.
    """

    def __init__(self, stdout: int, stderr: int, reply: socket.socket) -> None:
        self.stdout: IO[bytes] | None = os.fdopen(stdout, "rb")
        self.stderr: IO[bytes] | None = os.fdopen(stderr, "rb")
        self.returncode: int | None = None
        self.stale = False
        self.error: str | None = None
        self._reply = reply
        self._pidfd: int | None = None  # the program's, from the spawner: kill and see it end directly
        self._killed = False
        self._lock = threading.Lock()

    def _receive(self, block: bool) -> None:
        with self._lock:
            while self.returncode is None:
                self._reply.setblocking(block)
                try:
                    message, fds, _flags, _addr = socket.recv_fds(self._reply, 4096, 1)
                except BlockingIOError:
                    return
                except OSError:
                    message, fds = b"", []
                answer = json.loads(message) if message else {}
                if "pid" in answer:
                    if fds and self._pidfd is None:
                        self._pidfd = fds[0]
                    continue  # started; its code comes later
                for fd in fds:
                    os.close(fd)
                if answer.get("stale"):
                    self.stale = True
                elif "error" in answer:
                    self.error = str(answer["error"])
                # No answer at all: the spawner went away, and its program was killed with it.
                self._finish(int(answer.get("code", -9)))

    def _finish(self, code: int) -> None:
        self.returncode = code
        self._reply.close()  # the spawner reaps the program whatever happens here
        if self._pidfd is not None:
            os.close(self._pidfd)
            self._pidfd = None

    def poll(self) -> int | None:
        self._receive(block=False)
        return self.returncode

    def kill(self) -> None:
        """Kill the program (through its pidfd, else by asking the spawner); :meth:`wait` returns once it ended."""
        if self.returncode is not None:
            return
        self._receive(block=False)  # its pidfd may be waiting
        with self._lock:
            if self.returncode is not None:
                return
            if self._pidfd is not None:
                try:
                    signal.pidfd_send_signal(self._pidfd, signal.SIGKILL)
                    self._killed = True
                    return
                except OSError:
                    pass
            try:
                self._reply.send(b"kill")
            except OSError:
                pass  # answered or gone already

    def wait(self) -> int:
        with self._lock:
            if self._killed and self.returncode is None and self._pidfd is not None:
                # Killed here: it has ended once its pidfd is readable (the spawner reaps it).
                select.select([self._pidfd], [], [])
                self._finish(-9)
        self._receive(block=True)
        assert self.returncode is not None
        if self.error is not None:
            raise OSError(f"ripgrep did not start in the sandbox ({self.error})")
        return self.returncode


class ReaderSandbox:
    """One long-lived sandbox with the spawner inside, for one exact set of bubblewrap flags."""

    def __init__(self, prefix: list[str], root: str, env: dict[str, str]) -> None:
        self.prefix = prefix
        self.root = root
        self.born = self.used = time.monotonic()
        self.dead = threading.Event()
        self.closing = threading.Event()
        self.serving = threading.Event()  # the spawner said it is ready: idle time counts from then
        self._send_lock = threading.Lock()  # a close never frees the control socket under a send
        self._control, theirs = socket.socketpair(socket.AF_UNIX, socket.SOCK_SEQPACKET)
        filtered, seccomp = _filtered(prefix)
        argv = [*filtered, sys.executable, "-I", "-S", str(SPAWNER), str(theirs.fileno()), root,
                json.dumps(cover_checks(prefix))]
        started: list[subprocess.Popen[bytes] | BaseException] = []
        ready = threading.Event()

        def launcher() -> None:
            # bubblewrap's --die-with-parent follows the *thread* that started it: this thread lives
            # as long as the sandbox, so a tool call's worker thread ending does not end it.
            try:
                proc = subprocess.Popen(argv, cwd=root, env=env, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                                        stderr=subprocess.DEVNULL, pass_fds=(theirs.fileno(), seccomp),
                                        start_new_session=True)
            except OSError as exc:
                started.append(exc)
                ready.set()
                return
            finally:
                os.close(seccomp)
            started.append(proc)
            ready.set()
            while not self.closing.wait(CHECK_EVERY_S):
                now = time.monotonic()
                if self.serving.is_set() and (now - self.used > IDLE_S or now - self.born > MAX_AGE_S):
                    self.close()
            proc.wait()
            self.dead.set()

        threading.Thread(target=launcher, name="k1412-reader-sandbox", daemon=True).start()
        ready.wait()
        theirs.close()
        if isinstance(started[0], BaseException):
            self._control.close()
            raise OSError(f"the readers' sandbox did not start ({started[0]})")
        self._control.settimeout(READY_TIMEOUT_S)
        try:
            word = self._control.recv(16)
        except OSError:
            word = b""
        self._control.settimeout(None)
        if word != b"ready":
            self.close()
            started[0].kill()
            raise OSError("the readers' sandbox did not get ready")
        self.used = time.monotonic()
        self.serving.set()

    def usable(self, prefix: list[str]) -> bool:
        return (prefix == self.prefix and not self.closing.is_set() and not self.dead.is_set()
                and time.monotonic() - self.born < MAX_AGE_S)

    def spawn(self, argv: list[str]) -> SandboxedProcess | None:
        """Ask for ``argv`` (cwd: the root) to start inside; None when this sandbox can no longer take requests."""
        self.used = time.monotonic()
        out_r, out_w = os.pipe()
        err_r, err_w = os.pipe()
        mine, theirs = socket.socketpair(socket.AF_UNIX, socket.SOCK_SEQPACKET)
        try:
            request = json.dumps({"argv": argv, "cwd": self.root}).encode()
            with self._send_lock:
                socket.send_fds(self._control, [request], [out_w, err_w, theirs.fileno()])
        except OSError:
            os.close(out_r)
            os.close(err_r)
            mine.close()
            return None
        finally:
            os.close(out_w)
            os.close(err_w)
            theirs.close()
        return SandboxedProcess(out_r, err_r, mine)

    def close(self) -> None:
        """Start nothing more here; searches still running finish, then the spawner (and the sandbox) exits."""
        self.closing.set()
        with self._send_lock:
            self._control.close()


def _filtered(prefix: list[str]) -> tuple[list[str], int]:
    """``prefix`` (``bwrap <flags> --``) with the filter of a network-off command, and its descriptor to pass."""
    fd = filter_fd(command_filter(False))
    return [*prefix[:-1], "--seccomp", str(fd), "--"], fd


_lock = threading.Lock()
_current: ReaderSandbox | None = None
_failed_at: dict[tuple[str, ...], float] = {}


def _sandbox_for(prefix: list[str], root: str, env: dict[str, str], fresh: bool) -> ReaderSandbox | None:
    global _current
    with _lock:
        current = _current
        if current is not None and not fresh and current.usable(prefix):
            return current
        _current = None
        key = tuple(prefix)
        if time.monotonic() - _failed_at.get(key, -RETRY_AFTER_FAILURE_S) < RETRY_AFTER_FAILURE_S:
            new = None
        else:
            try:
                new = ReaderSandbox(prefix, root, env)
            except OSError:
                now = time.monotonic()
                for old in [k for k, at in _failed_at.items() if now - at > RETRY_AFTER_FAILURE_S]:
                    del _failed_at[old]
                _failed_at[key] = now
                new = None
        _current = new
    if current is not None:
        current.close()
    return new


def start_reader(wrapped: list[str], root: Path, env: dict[str, str], fresh: bool = False) -> ReaderProcess:
    """Start ``wrapped`` (``bwrap <flags> -- <program> ...``, cwd ``root``) in the kept sandbox.

    ``fresh``: build a new one first (the kept one answered ``stale``). Falls back to running
    ``wrapped`` itself (a fresh sandbox) when no sandbox can be kept.
    """
    cut = wrapped.index("--") + 1
    prefix, argv = wrapped[:cut], wrapped[cut:]
    for rebuild in (fresh, True):
        sandbox = _sandbox_for(prefix, str(root), env, rebuild)
        if sandbox is None:
            break
        proc = sandbox.spawn(argv)
        if proc is not None:
            return proc
    filtered, seccomp = _filtered(prefix)
    try:
        return subprocess.Popen([*filtered, *argv], cwd=root, stdin=subprocess.DEVNULL, env=env,
                                stdout=subprocess.PIPE, stderr=subprocess.PIPE, start_new_session=True,
                                pass_fds=(seccomp,))
    finally:
        os.close(seccomp)


def close_reader_sandbox() -> None:
    """End the kept sandbox and forget failed starts (tests; a server shutting down)."""
    global _current
    with _lock:
        current, _current = _current, None
        _failed_at.clear()
    if current is not None:
        current.close()


__all__ = ["IDLE_S", "MAX_AGE_S", "ReaderProcess", "ReaderSandbox", "SandboxedProcess", "close_reader_sandbox", "start_reader"]
