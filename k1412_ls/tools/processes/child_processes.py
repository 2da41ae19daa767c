"""Process plumbing shared by run_command, the process_* tools and the git tools.

Every child runs in its own session (so its whole process group can be
killed), with stdin at /dev/null, resource limits, a process-count cap
(:mod:`k1412_ls.tools.sandbox.process_cap`) and, for the model's commands, inside the
run's sandbox (:mod:`k1412_ls.tools.sandbox.command_sandbox`): a private PID namespace, so
when the command's leader exits or is killed, the kernel kills everything it
started, even processes that called ``setsid()``.

Output (stdout and stderr on one pipe, interleaved as produced) is drained
by a thread into a :class:`~k1412_ls.tools.processes.capture.HeadTailBuffer`, so a
child never blocks on a full pipe and the server's memory stays bounded.
"""

from __future__ import annotations

import logging
import os
import selectors
import signal
import subprocess
import threading
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

from k1412_ls.limits import LIMITS
from k1412_ls.tools.errors import ToolError
from k1412_ls.tools.processes.capture import HeadTailBuffer
from k1412_ls.tools.sandbox.command_sandbox import SANDBOXED, RunSandbox
from k1412_ls.tools.sandbox.confinement import CommandPlan, confined_argv, plan_command
from k1412_ls.tools.sandbox.launcher import launcher
from k1412_ls.tools.sandbox.process_cap import ProcessCap
from k1412_ls.tools.sandbox.warm_command import WarmSandbox, start_warm

log = logging.getLogger(__name__)

TERM_GRACE_S = 1.0
# After the leader exits, how long a survivor holding the pipe may keep us reading.
ABANDON_PIPE_AFTER_S = 1.0
READ_CHUNK = 64 * 1024

def exit_status(returncode: int) -> int:
    """The exit code as a shell reports it: death by signal N is 128+N."""
    return 128 - returncode if returncode < 0 else returncode


def shell_argv(command: str) -> list[str]:
    """How every model command is run: bash, failing a pipeline when any stage fails."""
    return ["bash", "-o", "pipefail", "-c", command]


class ProcessHandle:
    """A running child: its output is drained continuously; kill it and its whole group at will."""

    def __init__(self, popen: subprocess.Popen[bytes], sandbox_label: str, cap: ProcessCap | None = None,
                 after_exit: Callable[[], None] | None = None) -> None:
        self.popen = popen
        self.cap = cap
        self._after_exit = after_exit
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
                        # Whatever the leader left behind dies with it (it still holds our pipe): its group, and
                        # everything in its cgroup (a sandbox killed while bubblewrap was still setting it up
                        # lives on in a session of its own, before bubblewrap's die-with-parent holds).
                        self._kill_now()
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
        if self.cap is not None:
            # Anything that left the process group (and, without a PID namespace, survived) dies here.
            self.cap.close()
        if self._after_exit is not None:
            self._after_exit()
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

    @property
    def confined(self) -> bool:
        """Whether it runs in the sandbox, where no SIGTERM reaches the command (bubblewrap passes none on)."""
        return self.sandbox.startswith(SANDBOXED)

    def stop(self) -> None:
        """Ask it to end: SIGTERM to an unsandboxed group; a sandboxed command is killed outright.

        bubblewrap does not pass signals on, and while it is still setting the sandbox up it does not
        even die of a SIGTERM (it takes it once the command ends): a grace period would only let a
        command that should stop run on.
        """
        if self.confined:
            self._kill_now()
        else:
            self.signal_group(signal.SIGTERM)

    def _kill_now(self) -> None:
        self.signal_group(signal.SIGKILL)
        if self.cap is not None:
            self.cap.kill_all()

    def kill(self, grace_s: float = TERM_GRACE_S) -> None:
        """Stop it (:meth:`stop`), SIGKILL what is left after ``grace_s``, and wait until it is gone."""
        if self.exited.is_set():
            return
        self.stop()
        if self.confined or not self.exited.wait(grace_s):
            self._kill_now()
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


K1412_HELPER = "unsandboxed (K1412's own helper, safe configuration)"


def spawn(argv: Sequence[str], cwd: Path, env: Mapping[str, str], *, sandbox: RunSandbox | None = None,
          workspace: Path | None = None, network: bool | None = None, pass_fds: Sequence[int] = ()) -> ProcessHandle:
    """Start ``argv`` in its own session with limits and a process cap.

    With ``sandbox`` (every command the model runs) it runs confined by that
    run's policy (``network`` overrides the policy's for this command), in the
    sandbox started ahead for it when that one fits exactly (``tools.sandbox.warm_command``);
    without, it is one of K1412's own helpers (git). A :class:`ToolError`
    refuses to start what cannot be confined as the policy says.
    """
    full = list(argv)
    child_env = dict(env)
    label = K1412_HELPER
    release: Callable[[], None] | None = None
    extra_fds: tuple[int, ...] = ()
    cap = ProcessCap(sandbox.policy.max_processes if sandbox is not None else LIMITS.max_processes)
    if sandbox is not None:
        root = workspace or cwd
        planned = plan_command(sandbox, root, cwd, network)
        # Counted as running (and its judged files pinned for every sandbox of the run) until it ends.
        held = sandbox.registry.hold(planned.pins, planned.copies) if planned is not None else sandbox.registry.hold(())
        if planned is not None:
            try:
                handle = _in_warm_sandbox(full, cwd, child_env, sandbox, root, planned, pass_fds, held)
            except BaseException:
                held()
                raise
            if handle is not None:
                return handle
        try:
            confined = confined_argv(full, sandbox, root, cwd, network, planned)
        except BaseException:
            held()
            raise
        full, label = confined.argv, confined.label
        release = _both(confined.release, held)
        child_env.update(confined.env)
        extra_fds = confined.fds
        if planned is not None:
            release = _then_warm(release, sandbox, root)
    procs = cap.prepare()
    full, preexec = launcher(full, procs)
    if preexec is not None and procs is not None:
        cap.abandon()  # no launcher to enter it: the watchdog counts instead
    try:
        popen = subprocess.Popen(
            full, cwd=cwd, env=child_env, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT, start_new_session=True, close_fds=True, preexec_fn=preexec,
            pass_fds=(*pass_fds, *extra_fds),
        )
    except OSError as exc:
        _close_all(extra_fds)
        cap.close()
        if release is not None:
            release()
        raise ToolError(f"The process could not be started ({exc.strerror or type(exc).__name__}); "
                        "check the command and working directory.") from None
    _close_all(extra_fds)
    handle = ProcessHandle(popen, label, cap, after_exit=release)
    cap.start(popen.pid, on_trip=lambda: handle.signal_group(signal.SIGKILL))
    return handle


def _both(first: Callable[[], None], second: Callable[[], None]) -> Callable[[], None]:
    def both() -> None:
        try:
            first()
        finally:
            second()

    return both


def _then_warm(release: Callable[[], None], sandbox: RunSandbox, root: Path) -> Callable[[], None]:
    """After a sandboxed command ended: its own clean-up, then the next command's sandbox started ahead."""
    def after() -> None:
        release()
        _warm_next(sandbox, root)

    return after


def _warm_next(sandbox: RunSandbox, root: Path) -> None:
    """Start the next command's sandbox in the background (the ended command's result does not wait for it)."""
    base = sandbox.base
    if not base.begin_warm_start():
        return

    def start() -> None:
        try:
            start_warm(base, root, base.policy.max_processes)
        finally:
            base.end_warm_start()

    threading.Thread(target=start, name="k1412-warm-start", daemon=True).start()


def _in_warm_sandbox(argv: list[str], cwd: Path, env: dict[str, str], sandbox: RunSandbox, root: Path,
                     planned: CommandPlan, pass_fds: Sequence[int], held: Callable[[], None]) -> ProcessHandle | None:
    """The command started in the sandbox kept for it, or None (none kept, or it does not fit exactly)."""
    warm = sandbox.take_warm()
    if not isinstance(warm, WarmSandbox):
        return None
    if not warm.fits(planned, os.path.realpath(root)):
        warm.discard()
        return None
    if not warm.ready():
        # Still starting (commands back to back): this one starts fresh, and the next takes it when ready.
        if not sandbox.keep_warm(warm):
            warm.discard()
        return None
    popen = warm.hand_over(argv, {**env, "TMPDIR": "/tmp"}, os.path.realpath(cwd), pass_fds)
    if popen is None:
        return None
    sandbox.base.warm_served += 1
    def after() -> None:
        try:
            warm.finish()
        finally:
            held()
        _warm_next(sandbox, root)

    handle = ProcessHandle(popen, warm.label, warm.cap, after_exit=after)
    warm.cap.start(popen.pid, on_trip=lambda: handle.signal_group(signal.SIGKILL))
    return handle


def _close_all(fds: Sequence[int]) -> None:
    for fd in fds:
        try:
            os.close(fd)
        except OSError:
            pass


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
    process_cap: int | None = None  # the cap, when the command ran into it


def run_to_end(argv: Sequence[str], cwd: Path, env: Mapping[str, str], *, timeout_s: float,
               cancel: threading.Event | None = None, sandbox: RunSandbox | None = None,
               workspace: Path | None = None, network: bool | None = None,
               pass_fds: Sequence[int] = ()) -> Completed:
    """Run ``argv`` until it exits, times out or ``cancel`` is set; always leaves nothing running."""
    handle = spawn(argv, cwd, env, sandbox=sandbox, workspace=workspace, network=network, pass_fds=pass_fds)
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
        process_cap=handle.cap.limit if handle.cap is not None and handle.cap.exhausted() else None,
    )
