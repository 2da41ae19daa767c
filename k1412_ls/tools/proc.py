"""Process plumbing shared by run_command, the process_* tools and the git tools.

Every child runs in its own session (so its whole process group can be
killed), with stdin at /dev/null, resource limits, and, when bubblewrap
works here, in a private PID namespace: when the command's leader exits or
is killed, the kernel kills everything it started, even processes that
called ``setsid()``. Without bubblewrap the result says "unsandboxed".
When the run's :class:`CommandPolicy` turns the network off, the child also
gets its own network namespace (only a private loopback); without
bubblewrap that cannot be enforced, so such a command is refused.

Output (stdout and stderr on one pipe, interleaved as produced) is drained
by a thread into a :class:`~k1412_ls.tools.capture.HeadTailBuffer`, so a
child never blocks on a full pipe and the server's memory stays bounded.
"""

from __future__ import annotations

import functools
import logging
import os
import resource
import selectors
import shutil
import signal
import subprocess
import threading
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

from k1412_ls.tools.capture import HeadTailBuffer
from k1412_ls.tools.registry import ToolError

log = logging.getLogger(__name__)

GIB = 1024**3
# Generous enough for compilers and test suites, small enough to stop a runaway allocation or file.
LIMIT_ADDRESS_SPACE = 8 * GIB
LIMIT_FILE_SIZE = 1 * GIB
NPROC_HEADROOM = 2048
TERM_GRACE_S = 1.0
# After the leader exits, how long a survivor holding the pipe may keep us reading.
ABANDON_PIPE_AFTER_S = 1.0
READ_CHUNK = 64 * 1024

BWRAP_FLAGS = (
    "--bind", "/", "/", "--dev-bind", "/dev", "/dev", "--proc", "/proc",
    "--unshare-pid", "--die-with-parent",
)
SANDBOXED = "bwrap-pid-namespace"
NETWORK_OFF_FLAGS = ("--unshare-net",)
NETWORK_OFF_LABEL = "network off"

# Directories no sandboxed child may see or change: K1412's state directory holds every user's
# event logs and memories (SQLite), and a command could read them or forge this run's log.
# Registered by the runtime; each is covered by an empty tmpfs inside the sandbox.
_HIDDEN_DIRS: set[str] = set()
_HIDDEN_LOCK = threading.Lock()


def hide_from_commands(*paths: Path | str) -> None:
    """Hide ``paths`` (directories) from every sandboxed child started from now on."""
    with _HIDDEN_LOCK:
        _HIDDEN_DIRS.update(os.path.realpath(p) for p in paths)


def _mask_flags(cwd: Path) -> list[str]:
    """bwrap flags that cover each hidden directory with an empty tmpfs.

    A directory that does not exist is skipped (bwrap would create it on the
    host), and so is one that contains the working directory (hiding it would
    hide the workspace itself).
    """
    with _HIDDEN_LOCK:
        hidden = sorted(_HIDDEN_DIRS)
    real_cwd = Path(os.path.realpath(cwd))
    flags: list[str] = []
    for directory in hidden:
        if os.path.isdir(directory) and not real_cwd.is_relative_to(directory):
            flags += ["--tmpfs", directory]
    return flags


@dataclass(frozen=True)
class CommandPolicy:
    """How a run confines the commands the model starts (the ``[sandbox]`` configuration)."""

    network: bool = True


@dataclass(frozen=True)
class Sandbox:
    """Whether children run in a PID namespace; ``label`` is published with every command."""

    bwrap: str | None
    label: str
    reason: str = ""

    @property
    def active(self) -> bool:
        return self.bwrap is not None


@functools.lru_cache(maxsize=1)
def sandbox() -> Sandbox:
    """Probe bubblewrap once per server process; degrade loudly when it cannot be used."""
    if os.environ.get("K1412_SANDBOX", "").lower() in ("0", "off", "false", "no"):
        return _unsandboxed("K1412_SANDBOX is off")
    bwrap = shutil.which("bwrap")
    if bwrap is None:
        return _unsandboxed("bubblewrap (bwrap) is not installed")
    try:
        probe = subprocess.run(
            [bwrap, *BWRAP_FLAGS, "--chdir", "/", "--", "true"],
            stdin=subprocess.DEVNULL, capture_output=True, timeout=15, check=False,
        )
    except (OSError, subprocess.TimeoutExpired) as exc:
        return _unsandboxed(f"bwrap could not start ({type(exc).__name__})")
    if probe.returncode != 0:
        reason = probe.stderr.decode("utf-8", "replace").strip().splitlines()[:1]
        return _unsandboxed(f"bwrap failed here: {reason[0] if reason else probe.returncode}")
    return Sandbox(bwrap, SANDBOXED)


def _unsandboxed(reason: str) -> Sandbox:
    log.warning("K1412 commands run unsandboxed: %s; processes that leave their group may survive", reason)
    return Sandbox(None, f"unsandboxed ({reason})", reason)


@functools.lru_cache(maxsize=1)
def network_namespace_problem() -> str | None:
    """Probe once whether bwrap can also give a child its own network namespace; None when it can."""
    box = sandbox()
    if box.bwrap is None:
        return f"no sandbox (bubblewrap) is available ({box.reason})"
    try:
        probe = subprocess.run(
            [box.bwrap, *BWRAP_FLAGS, *NETWORK_OFF_FLAGS, "--chdir", "/", "--", "true"],
            stdin=subprocess.DEVNULL, capture_output=True, timeout=15, check=False,
        )
    except (OSError, subprocess.TimeoutExpired) as exc:
        return f"bubblewrap could not start with --unshare-net ({type(exc).__name__})"
    if probe.returncode != 0:
        reason = probe.stderr.decode("utf-8", "replace").strip().splitlines()[:1]
        return f"bubblewrap cannot unshare the network here ({reason[0] if reason else probe.returncode})"
    return None


def _network_off_refusal(problem: str) -> ToolError:
    return ToolError(f"Network is off in the configuration but {problem}, so commands cannot run; install "
                     "bubblewrap or set sandbox.network = true.")


def exit_status(returncode: int) -> int:
    """The exit code as a shell reports it: death by signal N is 128+N."""
    return 128 - returncode if returncode < 0 else returncode


def shell_argv(command: str) -> list[str]:
    """How every model command is run: bash, failing a pipeline when any stage fails."""
    return ["bash", "-o", "pipefail", "-c", command]


def _nproc_limit() -> int | None:
    """A per-user process cap with headroom, or None for root (the kernel ignores it for root)."""
    if os.geteuid() == 0:
        return None
    uid = os.geteuid()
    count = 0
    with os.scandir("/proc") as entries:
        for entry in entries:
            if entry.name.isdigit():
                try:
                    count += entry.stat().st_uid == uid
                except OSError:
                    continue
    limit = count + NPROC_HEADROOM
    hard = resource.getrlimit(resource.RLIMIT_NPROC)[1]
    return limit if hard == resource.RLIM_INFINITY else min(limit, hard)


def _limits() -> dict[int, int]:
    limits = {
        resource.RLIMIT_AS: LIMIT_ADDRESS_SPACE,
        resource.RLIMIT_FSIZE: LIMIT_FILE_SIZE,
        resource.RLIMIT_CORE: 0,
    }
    nproc = _nproc_limit()
    if nproc is not None:
        limits[resource.RLIMIT_NPROC] = nproc
    # Never raise a limit the server itself already runs under.
    for which, value in list(limits.items()):
        hard = resource.getrlimit(which)[1]
        if hard != resource.RLIM_INFINITY and hard < value:
            limits[which] = hard
    return limits


_PRLIMIT_FLAGS = {
    resource.RLIMIT_AS: "--as", resource.RLIMIT_FSIZE: "--fsize",
    resource.RLIMIT_CORE: "--core", resource.RLIMIT_NPROC: "--nproc",
}


def _limited(argv: list[str]) -> tuple[list[str], Callable[[], None] | None]:
    """Apply rlimits with util-linux prlimit when present (fork-safe); else in preexec_fn."""
    limits = _limits()
    prlimit = shutil.which("prlimit")
    if prlimit:
        return [prlimit, *(f"{_PRLIMIT_FLAGS[k]}={v}" for k, v in limits.items()), "--", *argv], None

    def apply() -> None:
        for which, value in limits.items():
            resource.setrlimit(which, (value, value))

    return argv, apply


class ProcessHandle:
    """A running child: its output is drained continuously; kill it and its whole group at will."""

    def __init__(self, popen: subprocess.Popen[bytes], sandbox_label: str) -> None:
        self.popen = popen
        self.pid = popen.pid
        self.sandbox = sandbox_label
        self.started = time.monotonic()
        self.ended: float | None = None
        self.returncode: int | None = None
        self.exited = threading.Event()
        self._buffer = HeadTailBuffer()
        self._buffer_lock = threading.Lock()
        # Held while signalling or reaping, so we never signal a group id the kernel may have reused.
        self._reap_lock = threading.Lock()
        self._reaped = False
        self._thread = threading.Thread(target=self._drain, name=f"k1412-drain-{self.pid}", daemon=True)
        self._thread.start()

    def _leader_exited(self) -> bool:
        try:
            info = os.waitid(os.P_PID, self.pid, os.WEXITED | os.WNOHANG | os.WNOWAIT)
        except ChildProcessError:
            return True
        return info is not None

    def _drain(self) -> None:
        assert self.popen.stdout is not None
        fd = self.popen.stdout.fileno()
        leader_gone: float | None = None
        with selectors.DefaultSelector() as selector:
            selector.register(fd, selectors.EVENT_READ)
            while True:
                if selector.select(0.05):
                    chunk = os.read(fd, READ_CHUNK)
                    if not chunk:
                        break
                    with self._buffer_lock:
                        self._buffer.write(chunk)
                if leader_gone is None:
                    if self._leader_exited():
                        # Whatever the leader left behind dies with it (it still holds our pipe).
                        self.signal_group(signal.SIGKILL)
                        leader_gone = time.monotonic()
                elif time.monotonic() - leader_gone > ABANDON_PIPE_AFTER_S:
                    break  # a process that escaped the group holds the pipe: stop reading
        self.popen.stdout.close()
        try:
            os.waitid(os.P_PID, self.pid, os.WEXITED | os.WNOWAIT)
        except ChildProcessError:
            pass
        with self._reap_lock:
            self._signal_locked(signal.SIGKILL)
            self.returncode = exit_status(self.popen.wait())
            self._reaped = True
        self.ended = time.monotonic()
        self.exited.set()

    def _signal_locked(self, sig: int) -> None:
        if self._reaped:
            return
        try:
            os.killpg(self.pid, sig)
        except (ProcessLookupError, PermissionError):
            pass

    def signal_group(self, sig: int) -> None:
        """Send ``sig`` to the whole process group unless the leader was already reaped."""
        with self._reap_lock:
            self._signal_locked(sig)

    def kill(self, grace_s: float = TERM_GRACE_S) -> None:
        """SIGTERM the group, SIGKILL it after ``grace_s``, and wait until it is gone."""
        if self.exited.is_set():
            return
        self.signal_group(signal.SIGTERM)
        if not self.exited.wait(grace_s):
            self.signal_group(signal.SIGKILL)
        self.exited.wait(ABANDON_PIPE_AFTER_S + 5.0)

    @property
    def running(self) -> bool:
        return not self.exited.is_set()

    @property
    def duration_ms(self) -> int:
        end = self.ended if self.ended is not None else time.monotonic()
        return int((end - self.started) * 1000)

    def take_output(self) -> HeadTailBuffer:
        """The output since the last take; a partial UTF-8 character waits for the next take."""
        with self._buffer_lock:
            taken = self._buffer
            self._buffer = HeadTailBuffer()
            if self.running:
                self._buffer.write(taken.take_incomplete_suffix())
        return taken


def spawn(argv: Sequence[str], cwd: Path, env: Mapping[str, str], *, sandboxed: bool = True,
          network: bool = True, pass_fds: Sequence[int] = ()) -> ProcessHandle:
    """Start ``argv`` in its own session with limits (and a PID namespace when available).

    With ``network=False`` the child gets a network namespace of its own (loopback
    only); when that cannot be enforced a :class:`ToolError` refuses to start it.
    """
    box = sandbox() if sandboxed else Sandbox(None, "unsandboxed (not requested)", "not requested")
    full = list(argv)
    label = box.label
    net_flags: tuple[str, ...] = ()
    if not network:
        problem = (f"no sandbox (bubblewrap) is available ({box.reason})" if box.bwrap is None
                   else network_namespace_problem())
        if problem is not None:
            raise _network_off_refusal(problem)
        net_flags = NETWORK_OFF_FLAGS
        label = f"{box.label}, {NETWORK_OFF_LABEL}"
    if box.bwrap is not None:
        full = [box.bwrap, *BWRAP_FLAGS, *net_flags, *_mask_flags(cwd), "--chdir", str(cwd), "--", *full]
    full, preexec = _limited(full)
    try:
        popen = subprocess.Popen(
            full, cwd=cwd, env=dict(env), stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT, start_new_session=True, close_fds=True, preexec_fn=preexec,
            pass_fds=tuple(pass_fds),
        )
    except OSError as exc:
        raise ToolError(f"The process could not be started ({exc.strerror or type(exc).__name__}); "
                        "check the command and working directory.") from None
    return ProcessHandle(popen, label)


@dataclass
class Completed:
    """How a finished command went, with its capped output."""

    exit_code: int | None
    output: str
    output_bytes: int
    omitted_bytes: int
    duration_ms: int
    timed_out: bool
    cancelled: bool
    sandbox: str


def run_to_end(argv: Sequence[str], cwd: Path, env: Mapping[str, str], *, timeout_s: float,
               cancel: threading.Event | None = None, sandboxed: bool = True, network: bool = True,
               pass_fds: Sequence[int] = ()) -> Completed:
    """Run ``argv`` until it exits, times out or ``cancel`` is set; always leaves nothing running."""
    handle = spawn(argv, cwd, env, sandboxed=sandboxed, network=network, pass_fds=pass_fds)
    deadline = handle.started + timeout_s
    timed_out = cancelled = False
    try:
        while not handle.exited.wait(0.05):
            if cancel is not None and cancel.is_set():
                cancelled = True
                break
            if time.monotonic() >= deadline:
                timed_out = True
                break
    finally:
        # Also reached on KeyboardInterrupt or any error: never leave a group running.
        handle.kill(0.2 if cancelled else TERM_GRACE_S)
    buffer = handle.take_output()
    text, omitted = buffer.render()
    return Completed(
        exit_code=handle.returncode, output=text, output_bytes=buffer.total, omitted_bytes=omitted,
        duration_ms=handle.duration_ms, timed_out=timed_out, cancelled=cancelled, sandbox=handle.sandbox,
    )
