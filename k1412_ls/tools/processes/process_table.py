"""The background processes of one run: :class:`ProcessTable`, by short id (p1, p2, …).

A table is a run-scoped service (``ctx.services.processes``, see
:mod:`k1412_ls.tools.ports`); the run calls :meth:`ProcessTable.kill_all` when
it ends or is cancelled, so no background process outlives its run. The tools
that use it are in :mod:`k1412_ls.tools.processes.process_tools`.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import IO, Any

from k1412_ls.limits import LIMITS
from k1412_ls.tools.errors import ToolError
from k1412_ls.tools.processes.child_processes import ProcessHandle, shell_argv, spawn
from k1412_ls.tools.processes.observe import (
    close_quietly,
    fileno,
    observed_command,
    read_records,
    status_file,
)
from k1412_ls.tools.sandbox.command_sandbox import RunSandbox

MAX_RUNNING = LIMITS.max_background_processes


@dataclass
class ManagedProcess:
    """One background process of this run."""

    process_id: str
    name: str | None
    command: str
    cwd: str
    handle: ProcessHandle
    cancelled: bool = False
    records: IO[bytes] | None = None  # observed exit statuses of the programs it ran (tools.processes.observe)

    def observed(self) -> list[dict[str, Any]]:
        """The programs it ran and their statuses, once it has ended."""
        if self.records is None or self.handle.running:
            return []
        try:
            return read_records(self.records)
        except (OSError, ValueError):
            return []

    @property
    def status(self) -> str:
        if self.handle.running:
            return "running"
        return "killed" if self.cancelled else "exited"


@dataclass
class Snapshot:
    """What one poll or cancel saw: status, exit code and the output since the previous look."""

    process: ManagedProcess
    status: str
    exit_code: int | None
    output: str
    output_bytes: int
    omitted_bytes: int


class ProcessTable:
    """The background processes of one run, by short id (p1, p2, …)."""

    def __init__(self, max_running: int = MAX_RUNNING) -> None:
        self.max_running = max_running
        self._lock = threading.Lock()
        self._processes: dict[str, ManagedProcess] = {}
        self._counter = 0
        self._closed = False

    def ids(self) -> list[str]:
        with self._lock:
            return list(self._processes)

    def start(self, command: str, cwd: Path, env: Mapping[str, str], *, cwd_label: str = ".",
              name: str | None = None, sandbox: RunSandbox, workspace: Path,
              network: bool | None = None) -> ManagedProcess:
        """Spawn ``command`` in the background, confined by ``sandbox``, and give it the next id."""
        with self._lock:
            if self._closed:
                raise ToolError("This run has ended; its background processes were stopped and no new one starts.")
            running = [p for p in self._processes.values() if p.handle.running]
            if len(running) >= self.max_running:
                raise ToolError(f"{len(running)} background processes are already running; stop one with "
                                "process_cancel before starting another.")
            records = status_file()
            try:
                fd = fileno(records)
                handle = spawn(shell_argv(observed_command(command, fd)), cwd, env, sandbox=sandbox,
                               workspace=workspace, network=network, pass_fds=(fd,))
            except BaseException:
                close_quietly(records)
                raise
            self._counter += 1
            process = ManagedProcess(f"p{self._counter}", name, command, cwd_label, handle, records=records)
            self._processes[process.process_id] = process
            return process

    def get(self, process_id: str) -> ManagedProcess:
        """The process with this id, or a ToolError naming the ids that exist."""
        with self._lock:
            process = self._processes.get(process_id.strip())
            known = list(self._processes)
        if process is None:
            if not known:
                raise ToolError(f"Unknown process id '{process_id}'; no background process was started in this "
                                "run, so start one with process_start.")
            raise ToolError(f"Unknown process id '{process_id}'; use one of: {', '.join(known)}.")
        return process

    def poll(self, process_id: str, wait_s: float = 0.0, cancel: threading.Event | None = None) -> Snapshot:
        """New output since the last look; waits up to ``wait_s`` for the process to exit, holding no lock."""
        process = self.get(process_id)
        if wait_s > 0 and process.handle.running:
            if cancel is None:
                process.handle.exited.wait(wait_s)
            else:
                # Wake every 50 ms so a cancelled run does not sit out the wait.
                remaining = wait_s
                while remaining > 0 and not cancel.is_set() and not process.handle.exited.wait(min(0.05, remaining)):
                    remaining -= 0.05
        return self._snapshot(process)

    def cancel(self, process_id: str) -> tuple[Snapshot, bool]:
        """Kill the process and its group; the flag is False when it had already ended."""
        process = self.get(process_id)
        if not process.handle.running:
            return self._snapshot(process), False
        process.cancelled = True
        process.handle.kill()
        return self._snapshot(process), True

    def kill_all(self, grace_s: float = 0.2) -> list[str]:
        """Kill every running process of this run and refuse new ones; returns the ids killed.

        All are stopped at once (SIGTERM to an unsandboxed group; a sandboxed one is killed outright,
        ``ProcessHandle.stop``) with one shared grace period, so ending a run with many processes
        takes about ``grace_s``, not ``grace_s`` each.
        """
        with self._lock:
            self._closed = True
            running = [p for p in self._processes.values() if p.handle.running]
        for process in running:
            process.cancelled = True
            process.handle.stop()
        deadline = time.monotonic() + grace_s
        for process in running:
            process.handle.exited.wait(max(0.0, deadline - time.monotonic()))
        for process in running:
            process.handle.kill(0.0)
        with self._lock:
            for process in self._processes.values():
                if process.records is not None:
                    close_quietly(process.records)
                    process.records = None
        return [p.process_id for p in running]

    @staticmethod
    def _snapshot(process: ManagedProcess) -> Snapshot:
        status = process.status  # before taking output: a final take must include everything
        buffer = process.handle.take_output()
        text, omitted = buffer.render()
        exit_code = None if status == "running" else process.handle.returncode
        return Snapshot(process, status, exit_code, text, buffer.total, omitted)


__all__ = ["MAX_RUNNING", "ManagedProcess", "ProcessTable", "Snapshot"]
