"""Background processes with an explicit lifecycle: process_start, process_poll, process_cancel.

A :class:`ProcessTable` is a run-scoped service (``ctx.services["processes"]``);
the loop calls :meth:`ProcessTable.kill_all` when the run ends or is
cancelled, so no background process outlives its run.
"""

from __future__ import annotations

import signal
import threading
import time
from collections.abc import Mapping
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import IO, Any

from pydantic import BaseModel, ConfigDict, Field

from k1412_ls.text.numbers import extract_numbers, measurement_units
from k1412_ls.text.redact import Redactor
from k1412_ls.text.runner_summaries import parse_summary
from k1412_ls.tools.child_processes import ProcessHandle, shell_argv, spawn
from k1412_ls.tools.errors import ToolError
from k1412_ls.tools.facts import excerpt
from k1412_ls.tools.observe import (
    close_quietly,
    fileno,
    observed_command,
    observed_facts,
    read_records,
    status_file,
)
from k1412_ls.tools.registry import Tool, ToolContext, ToolResult
from k1412_ls.tools.run_command import child_env, confinement_for, resolve_cwd
from k1412_ls.tools.sandbox import SANDBOXED, RunSandbox

MAX_WAIT_S = 30.0
MAX_RUNNING = 16
SERVICE_NAME = "processes"


@dataclass
class ManagedProcess:
    """One background process of this run."""

    process_id: str
    name: str | None
    command: str
    cwd: str
    handle: ProcessHandle
    cancelled: bool = False
    records: IO[bytes] | None = None  # observed exit statuses of the programs it ran (tools.observe)

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

        All groups get SIGTERM at once and one shared grace period, so ending a
        run with many processes takes about ``grace_s``, not ``grace_s`` each.
        """
        with self._lock:
            self._closed = True
            running = [p for p in self._processes.values() if p.handle.running]
        for process in running:
            process.cancelled = True
            process.handle.signal_group(signal.SIGTERM)
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


def table(ctx: ToolContext) -> ProcessTable:
    """The run's process table."""
    service = ctx.service(SERVICE_NAME)
    if not isinstance(service, ProcessTable):
        raise ToolError("The process service of this run is misconfigured; background processes are unavailable.")
    return service


def _result(ctx: ToolContext, snap: Snapshot, op: str, error: str | None = None, **extra: Any) -> ToolResult:
    redactor: Redactor = ctx.redactor
    text = redactor.text(snap.output)
    process = snap.process
    facts = {
        "kind": "process", "op": op, "process_id": process.process_id, "command": redactor.text(process.command),
        "status": snap.status, "exit_code": snap.exit_code, "output": excerpt(text),
        "numbers": extract_numbers(text), "sandbox": process.handle.sandbox,
        "units": measurement_units(text, 200), "tests": asdict(parse_summary(text)),
    }
    if snap.status != "running":
        facts.update(observed_facts(process.command, process.observed(), redactor.text))
    fields: dict[str, Any] = {"process_id": process.process_id, "status": snap.status,
                              "exit_code": snap.exit_code, "output": text, "output_bytes": snap.output_bytes}
    if snap.omitted_bytes:
        fields["omitted_bytes"] = snap.omitted_bytes
    if not process.handle.sandbox.startswith(SANDBOXED):
        fields["sandbox"] = process.handle.sandbox
    fields.update(extra)
    if error:
        return ToolResult.failure(error, facts=facts, **fields)
    return ToolResult.success(facts=facts, **fields)


class ProcessStartArgs(BaseModel):
    """Arguments of process_start."""

    model_config = ConfigDict(extra="forbid")

    command: str = Field(min_length=1, description="A bash command line to run in the background.")
    cwd: str | None = Field(default=None, description="Working directory relative to the workspace root.")
    name: str | None = Field(default=None, max_length=80, description="A short label for this process.")


class ProcessPollArgs(BaseModel):
    """Arguments of process_poll."""

    model_config = ConfigDict(extra="forbid")

    process_id: str = Field(min_length=1, description="The id process_start returned, e.g. p1.")
    wait_s: float = Field(default=0, ge=0, description="Seconds to wait for the process to exit first (max 30).")


class ProcessCancelArgs(BaseModel):
    """Arguments of process_cancel."""

    model_config = ConfigDict(extra="forbid")

    process_id: str = Field(min_length=1, description="The id process_start returned, e.g. p1.")


def process_start(args: ProcessStartArgs, ctx: ToolContext) -> ToolResult:
    """Start a background process and return its id."""
    if ctx.cancel.is_set():
        raise ToolError("The run was cancelled; no background process was started.")
    cwd = resolve_cwd(ctx, args.cwd)
    sandbox, network, withheld = confinement_for(ctx, args.command)
    process = table(ctx).start(args.command, cwd, child_env(ctx), cwd_label=ctx.workspace.relative(cwd),
                               name=args.name, sandbox=sandbox, workspace=ctx.workspace.root, network=network)
    redactor = ctx.redactor
    facts = {"kind": "process", "op": "start", "process_id": process.process_id,
             "command": redactor.text(args.command), "status": "running", "exit_code": None, "output": "",
             "numbers": [], "sandbox": process.handle.sandbox}
    fields: dict[str, Any] = {"process_id": process.process_id, "status": "running"}
    if args.name:
        fields["name"] = args.name
    if withheld:
        fields["note"] = withheld
    if not process.handle.sandbox.startswith(SANDBOXED):
        fields["sandbox"] = process.handle.sandbox
    return ToolResult.success(facts=facts, **fields)


def process_poll(args: ProcessPollArgs, ctx: ToolContext) -> ToolResult:
    """Status, exit code and new output of a background process."""
    wait_s = min(args.wait_s, MAX_WAIT_S)
    snap = table(ctx).poll(args.process_id, wait_s, ctx.cancel)
    extra: dict[str, Any] = {}
    if args.wait_s > MAX_WAIT_S:
        extra["note"] = f"wait_s {args.wait_s:g} is above the {MAX_WAIT_S:g} s maximum; waited at most {MAX_WAIT_S:g} s."
    error = None
    if snap.status == "exited" and snap.exit_code:
        error = (f"Process {snap.process.process_id} exited with code {snap.exit_code}; read its output, fix the "
                 "cause and start it again.")
    return _result(ctx, snap, "poll", error, **extra)


def process_cancel(args: ProcessCancelArgs, ctx: ToolContext) -> ToolResult:
    """Kill a background process and everything it started; cancelling twice is harmless."""
    snap, killed = table(ctx).cancel(args.process_id)
    if killed:
        return _result(ctx, snap, "cancel", message=f"Process {snap.process.process_id} and its children were killed.")
    return _result(ctx, snap, "cancel", already_ended=True,
                   message=f"Process {snap.process.process_id} had already ended ({snap.status}); nothing to cancel.")


_TAGS = frozenset({"process", "execution"})

TOOLS: list[Tool] = [
    Tool(
        name="process_start",
        description=("Start a long-running command (server, watcher, slow build) in the background and get a "
                     "process_id; it is killed when the run ends. Check it with process_poll."),
        args_model=ProcessStartArgs, handler=process_start, parallel_safe=False, read_only=False, tags=_TAGS,
    ),
    Tool(
        name="process_poll",
        description=("Get a background process's status (running|exited|killed), exit code and the output it "
                     "produced since the last poll; wait_s waits up to 30 s for it to exit."),
        args_model=ProcessPollArgs, handler=process_poll, parallel_safe=True, read_only=True, tags=_TAGS,
    ),
    Tool(
        name="process_cancel",
        description="Stop a background process and everything it started.",
        args_model=ProcessCancelArgs, handler=process_cancel, parallel_safe=False, read_only=False, tags=_TAGS,
    ),
]
