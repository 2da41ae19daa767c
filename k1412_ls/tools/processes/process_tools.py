"""Background processes with an explicit lifecycle: process_start, process_poll, process_cancel.

They act on the run's :class:`~k1412_ls.tools.processes.process_table.ProcessTable`
(``ctx.services.processes``); the run kills every process of the table when it
ends or is cancelled, so no background process outlives its run.
"""

from __future__ import annotations

from dataclasses import asdict
from typing import Any

from pydantic import BaseModel, ConfigDict, Field

from k1412_ls.limits import LIMITS
from k1412_ls.text.numbers import extract_numbers, measurement_units
from k1412_ls.text.redact import Redactor
from k1412_ls.text.runner_summaries import parse_summary
from k1412_ls.tools.errors import ToolError
from k1412_ls.tools.facts import excerpt
from k1412_ls.tools.ports import required
from k1412_ls.tools.processes.observe import observed_facts
from k1412_ls.tools.processes.process_table import ProcessTable, Snapshot
from k1412_ls.tools.processes.run_command import child_env, confinement_for, resolve_cwd
from k1412_ls.tools.registry import Tool, ToolContext, ToolResult
from k1412_ls.tools.sandbox.command_sandbox import SANDBOXED

MAX_WAIT_S = LIMITS.max_process_wait_s


def table(ctx: ToolContext) -> ProcessTable:
    """The run's process table (a ToolError when the run has none)."""
    return required(ctx.services.processes, "processes")


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
    wait_s: float = Field(default=0, ge=0,
                          description=f"Seconds to wait for the process to exit first (max {MAX_WAIT_S:g}).")


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
                     f"produced since the last poll; wait_s waits up to {MAX_WAIT_S:g} s for it to exit."),
        args_model=ProcessPollArgs, handler=process_poll, parallel_safe=True, read_only=True, tags=_TAGS,
    ),
    Tool(
        name="process_cancel",
        description="Stop a background process and everything it started.",
        args_model=ProcessCancelArgs, handler=process_cancel, parallel_safe=False, read_only=False, tags=_TAGS,
    ),
]
