"""The next command's sandbox, started while the model is still thinking.

Starting bubblewrap costs a command ~7 ms of its ~12 ms overhead (namespaces, a dozen mounts,
pivot_root) and more on a loaded machine. So when a sandboxed command ends, K1412 starts the
next one's sandbox at once: the same launcher (pids cgroup, limits), bubblewrap with the flags a
command in the workspace root would get, and inside it a small stage
(:mod:`k1412_ls.tools.sandbox.command_stage`) that waits for the command.

A command takes it only when nothing that decides its confinement changed: the flags worked out
for *this* command (its working directory, network, approvals, what exists and is hidden now)
must equal the kept sandbox's except for the working directory, the workspace root must be the
same directory, and from inside the stage checks that no cover was replaced since it started.
Otherwise the kept one is ended and the command starts in a fresh sandbox, as it always did.
A command that needs placeholder directories (a missing ``PATH`` directory in a writable place)
never gets a kept sandbox: the placeholder it holds would change the next plan. Each kept
sandbox serves one command; the run's end ends an unused one.
"""

from __future__ import annotations

import logging
import marshal
import os
import signal
import socket
import subprocess
import sys
import threading
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path

from k1412_ls.tools.sandbox.command_sandbox import RunSandbox
from k1412_ls.tools.sandbox.confinement import (
    CommandPlan,
    confine,
    landlock_works,
    plan_command,
    writable_trees,
)
from k1412_ls.tools.sandbox.covers import cover_checks as _checks
from k1412_ls.tools.sandbox.launcher import launcher
from k1412_ls.tools.sandbox.process_cap import ProcessCap

log = logging.getLogger(__name__)

STAGE = Path(__file__).with_name("command_stage.py")
READY_TIMEOUT_S = 10.0  # for the stage's "go" once it said "ready" (a few lstat calls and an exec)
MAX_REQUEST_BYTES = 256 * 1024
MAX_FDS = 16
STAGE_ENV = {"PATH": "/usr/bin:/bin"}  # bubblewrap and the stage need nothing else; the command gets its own


def _identity(path: str) -> tuple[int, int] | None:
    try:
        info = os.stat(path)
    except OSError:
        return None
    return info.st_dev, info.st_ino


class WarmSandbox:
    """One command's sandbox with the stage inside, waiting for that command."""

    def __init__(self, planned: CommandPlan, root: str, cap: ProcessCap) -> None:
        self.key = planned.key()
        self.label = planned.label
        self.root = root
        self.root_id = _identity(root)
        self.cap = cap
        self._release: Callable[[], None] | None = None
        self._writable: list[str] | None = None  # where the command may open files for writing (Landlock)
        self._popen: subprocess.Popen[bytes] | None = None
        self._started = threading.Event()
        self._done = threading.Event()  # the command it served ended, or it was discarded: the keeper may go
        self._lock = threading.Lock()
        self._finished = False
        self._ready = False
        self._control, theirs = socket.socketpair(socket.AF_UNIX, socket.SOCK_SEQPACKET)
        try:
            self._start(planned, theirs)
        finally:
            theirs.close()

    def _start(self, planned: CommandPlan, theirs: socket.socket) -> None:
        flags = planned.plan.flags
        stage = [sys.executable, "-I", "-S", str(STAGE), str(theirs.fileno()), self.root]
        # The stage applies the command's Landlock ruleset itself, just before it execs the command (one
        # interpreter start instead of two): the same ruleset a fresh sandbox's helper applies.
        confined = confine(stage, planned, landlocked_inside=True)
        self._writable = writable_trees(planned) if landlock_works() else None
        self._release = confined.release
        procs = self.cap.prepare()
        argv, preexec = launcher(confined.argv, procs)
        if preexec is not None and procs is not None:
            self.cap.abandon()
        failure: list[BaseException] = []

        def keeper() -> None:
            # bubblewrap's --die-with-parent follows the *thread* that forked it: this one lives until the
            # command that takes the sandbox has ended (or the sandbox was discarded).
            try:
                self._popen = subprocess.Popen(
                    argv, cwd=self.root, env={**STAGE_ENV, **confined.env}, stdin=subprocess.DEVNULL,
                    stdout=subprocess.PIPE, stderr=subprocess.STDOUT, start_new_session=True, close_fds=True,
                    preexec_fn=preexec, pass_fds=(theirs.fileno(), *confined.fds))
            except OSError as exc:
                failure.append(exc)
            finally:
                for fd in confined.fds:
                    os.close(fd)
                self._started.set()
            if self._popen is not None:
                self._done.wait()

        threading.Thread(target=keeper, name="k1412-warm-sandbox", daemon=True).start()
        self._started.wait()
        if failure or self._popen is None:
            self.discard()
            raise OSError(f"the next command's sandbox did not start ({failure[0] if failure else 'no process'})")
        self._control.send(marshal.dumps({**_checks(flags), "writable": self._writable}))
        self._control.setblocking(False)

    def ready(self) -> bool:
        """Whether the stage said it is ready (without waiting); one that failed is discarded."""
        if self._ready:
            return True
        try:
            word = self._control.recv(16)
        except BlockingIOError:
            return False
        except OSError:
            word = b""
        if word == b"ready":
            self._ready = True
            return True
        log.info("the next command's sandbox did not get ready (%s)", word.decode(errors="replace") or "it ended")
        self.discard()
        return False

    def fits(self, planned: CommandPlan, root: str) -> bool:
        return planned.key() == self.key and root == self.root and _identity(root) == self.root_id

    def hand_over(self, argv: Sequence[str], env: Mapping[str, str], cwd: str,
                  pass_fds: Sequence[int]) -> subprocess.Popen[bytes] | None:
        """Start ``argv`` here (call once :meth:`ready`); the process, or None when this sandbox cannot take it."""
        popen = self._popen
        request = marshal.dumps({"argv": list(argv), "env": dict(env), "cwd": cwd, "fds": list(pass_fds)})
        if popen is None or not self._ready or len(request) > MAX_REQUEST_BYTES or len(pass_fds) > MAX_FDS:
            self.discard()
            return None
        word = b""
        try:
            self._control.setblocking(True)
            socket.send_fds(self._control, [request], list(pass_fds))
            self._control.settimeout(READY_TIMEOUT_S)
            word = self._control.recv(16)
        except OSError:
            pass
        if word != b"go":
            log.info("the kept sandbox could not take the command (%s); starting a fresh one",
                     word.decode(errors="replace") or "no answer")
            self.discard()
            return None
        self._control.close()
        return popen

    def finish(self) -> None:
        """The command it served ended (and was reaped): remove its placeholders, let the keeper thread go."""
        with self._lock:
            if self._finished:
                return
            self._finished = True
        if self._release is not None:
            self._release()
        self._done.set()

    def discard(self) -> None:
        """End it unused: kill the stage and its sandbox, reap them, remove the cgroup."""
        popen = self._popen
        self._control.close()
        if popen is not None:
            try:
                os.killpg(popen.pid, signal.SIGKILL)
            except (ProcessLookupError, PermissionError):
                pass
            try:
                popen.wait(timeout=10)
            except subprocess.TimeoutExpired:
                log.warning("an unused kept sandbox (pid %d) did not end", popen.pid)
            if popen.stdout is not None:
                popen.stdout.close()
        self.cap.close()
        self.finish()


def start_warm(sandbox: RunSandbox, workspace: Path, max_processes: int) -> None:
    """Start the next command's sandbox (workspace root, the run's own policy) and keep it with the run."""
    if not sandbox.wants_warm():
        return
    try:
        root = os.path.realpath(workspace)
        planned = plan_command(sandbox, Path(root), Path(root))
        if planned is None or planned.plan.placeholders:
            return
        warm = WarmSandbox(planned, root, ProcessCap(max_processes))
    except Exception as exc:  # a kept sandbox is an optimisation: the next command starts fresh instead
        log.info("the next command's sandbox was not started ahead (%s)", exc)
        return
    if not sandbox.keep_warm(warm):
        warm.discard()


__all__ = ["WarmSandbox", "start_warm"]
