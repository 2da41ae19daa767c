"""The ``run_command`` tool: one shell command, run to completion, reported truthfully."""

from __future__ import annotations

import os
import weakref
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict, Field

from k1412_ls.limits import LIMITS
from k1412_ls.tools.approval.approval_policy import ApprovalGate
from k1412_ls.tools.errors import ToolError
from k1412_ls.tools.facts import exec_facts
from k1412_ls.tools.git_head import commit_facts, read_head
from k1412_ls.tools.processes.child_processes import Completed, run_to_end, shell_argv
from k1412_ls.tools.processes.observe import (
    close_quietly,
    fileno,
    observed_command,
    observed_facts,
    read_records,
    status_file,
)
from k1412_ls.tools.registry import Tool, ToolContext, ToolResult
from k1412_ls.tools.sandbox.command_sandbox import SANDBOXED, RunSandbox, SandboxPolicy
from k1412_ls.tools.sandbox.environment import clean_path, scrubbed_env, withheld_secrets
from k1412_ls.tools.sandbox.host_tmp import hidden_tmp_note
from k1412_ls.tools.undo.changes import ChangeTracker, change_entries

MAX_TIMEOUT_S = LIMITS.max_command_timeout_s


class RunCommandArgs(BaseModel):
    """Arguments of run_command."""

    model_config = ConfigDict(extra="forbid")

    command: str = Field(min_length=1, description="A bash command line; it runs under `bash -o pipefail -c`.")
    cwd: str | None = Field(default=None, description="Working directory relative to the workspace root.")
    timeout_s: float | None = Field(
        default=None, gt=0, description=f"Seconds before the command and all its processes are killed (max {MAX_TIMEOUT_S:g})."
    )


def resolve_cwd(ctx: ToolContext, cwd: str | None) -> Path:
    """The confined working directory, which must exist and be a directory."""
    path = ctx.workspace.resolve(cwd or ".")
    if not path.is_dir():
        raise ToolError(f"The working directory '{cwd}' is not an existing directory; pass a directory "
                        "inside the workspace or omit cwd.")
    return path


def run_sandbox(ctx: ToolContext) -> RunSandbox:
    """The run's sandbox (``ctx.services.sandbox``).

    A context without one (an embedder's) gets the default policy, the
    strictest: network off, ``.git`` read-only; its ``/tmp`` goes with the context.
    """
    sandbox = ctx.services.sandbox
    if sandbox is None or isinstance(sandbox, SandboxPolicy):
        sandbox = RunSandbox(sandbox)
        ctx.services.sandbox = sandbox
        weakref.finalize(ctx, sandbox.close)
    if not isinstance(sandbox, RunSandbox):
        raise ToolError("The sandbox of this run is misconfigured, so commands cannot run; check the "
                        "[sandbox] section of the configuration.")
    return sandbox


def confinement_for(ctx: ToolContext, command: str) -> tuple[RunSandbox, bool, str]:
    """The sandbox and network setting ``command`` runs with, after the approval policy had its say.

    The third value is a note for the model when a rule's grant was withheld
    from the line. Raises the approval's ToolError (one sentence) when the
    command must not run.
    """
    sandbox = run_sandbox(ctx)
    gate = ctx.services.approval
    if gate is None:
        gate = ApprovalGate(sandbox=sandbox.policy, git_dir_exists=lambda: (ctx.workspace.root / ".git").exists(),
                            workspace=ctx.workspace.root, others_running=lambda: sandbox.registry.running() > 0)
    grant = gate.check(command)
    for path in grant.writable:
        if not os.path.lexists(path):
            _create_approved_file(path)
    network = sandbox.policy.network if grant.network is None else grant.network
    return sandbox.derived(grant.sandbox_policy(sandbox.policy), grant.judged), network, grant.withheld


def _create_approved_file(path: str) -> None:
    """Create the one file an approved command may write outside (so the sandbox can mount just it)."""
    try:
        os.close(os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC, 0o644))
    except FileExistsError:
        pass
    except OSError as exc:
        raise ToolError(f"The approved file {path} could not be created ({exc.strerror}); nothing was run.") from None


def child_env(ctx: ToolContext) -> dict[str, str]:
    """The environment for a child: the allow-listed part of the run's environment (or ours).

    Built by :func:`~k1412_ls.tools.sandbox.environment.scrubbed_env` with the
    variables the user's ``[sandbox] env`` names; values the run's redactor
    knows are withheld, and what was withheld (or passed) that looks secret is
    taught to the redactor. Computed once per run and environment, then copied.
    """
    return dict(_child_env(ctx)[0])


def path_note(ctx: ToolContext) -> str | None:
    """A sentence about the relative or empty PATH entries commands do not get; once per run."""
    fresh = _child_env(ctx)[1]
    if not fresh:
        return None
    source = os.environ if ctx.env is None else ctx.env
    dropped = clean_path(source.get("PATH", ""))[1]
    if not dropped:
        return None
    shown = ", ".join(repr(d) for d in dropped)
    return (f"Relative or empty PATH entries ({shown}) were left out of commands' PATH, so a program planted "
            "in the workspace never runs under a familiar name; call such programs by path.")


def _child_env(ctx: ToolContext) -> tuple[dict[str, str], bool]:
    source = os.environ if ctx.env is None else ctx.env
    sandbox = ctx.services.sandbox
    passed = sandbox.env if isinstance(sandbox, SandboxPolicy) else sandbox.policy.env \
        if isinstance(sandbox, RunSandbox) else ()
    key = (id(source), hash((frozenset(source.items()), passed)), id(ctx.redactor))
    cached = ctx.services.child_env
    if cached is not None and cached[0] == key:
        return cached[1], False
    env = scrubbed_env(source, redactor=ctx.redactor, passed=passed)
    learned = withheld_secrets(source, env, ctx.redactor)
    if learned:
        ctx.redactor.add(*learned)
    ctx.services.child_env = (key, env)
    return env, True


def output_fields(done: Completed, text: str) -> dict[str, Any]:
    """Output plus its byte counts; ``omitted_bytes`` only when something was cut."""
    fields: dict[str, Any] = {"output": text, "output_bytes": done.output_bytes}
    if done.omitted_bytes:
        fields["omitted_bytes"] = done.omitted_bytes
    return fields


def _failure_sentence(done: Completed, timeout_s: float) -> str | None:
    if done.cancelled:
        return "The command was cancelled and its processes were killed; do not retry unless the user asks."
    if done.timed_out:
        return (f"The command timed out after {timeout_s:g} s and its processes were killed; make it faster, "
                "pass a larger timeout_s, or use process_start for long-running work.")
    if done.exit_code == 127:
        return "The command exited with code 127 (command not found); check the program name or install it."
    if done.exit_code:
        return f"The command exited with code {done.exit_code}; read the output, fix the cause and run it again."
    return None


def run_command(args: RunCommandArgs, ctx: ToolContext) -> ToolResult:
    """Run one command in the workspace and report its real exit code and capped output."""
    cwd = resolve_cwd(ctx, args.cwd)
    timeout_s = args.timeout_s or MAX_TIMEOUT_S
    note = None
    if timeout_s > MAX_TIMEOUT_S:
        note = f"timeout_s {timeout_s:g} is above the {MAX_TIMEOUT_S:g} s maximum; used {MAX_TIMEOUT_S:g} s."
        timeout_s = MAX_TIMEOUT_S
    if ctx.cancel.is_set():
        raise ToolError("The run was cancelled before the command started; nothing was run.")
    sandbox, network, withheld = confinement_for(ctx, args.command)
    for extra in (withheld, path_note(ctx)):
        if extra:
            note = f"{note} {extra}" if note else extra
    root = ctx.workspace.root
    holder = ctx.services.changes
    tracker = holder.tracker() if holder is not None else ChangeTracker(root)
    before = tracker.begin()
    head_before = read_head(root)
    records_file = status_file()
    try:
        fd = fileno(records_file)
        done = run_to_end(shell_argv(observed_command(args.command, fd)), cwd, child_env(ctx), timeout_s=timeout_s,
                          cancel=ctx.cancel, sandbox=sandbox, workspace=root, network=network, pass_fds=(fd,))
        records = read_records(records_file)
    finally:
        close_quietly(records_file)
    changes, complete = tracker.end(before)
    if holder is None:
        tracker.close()
    text = ctx.redactor.text(done.output)
    rel_cwd = ctx.workspace.relative(cwd)
    killed = done.timed_out or done.cancelled
    facts = exec_facts(ctx.redactor.text(args.command), rel_cwd, None if killed else done.exit_code, text,
                       timed_out=done.timed_out, cancelled=done.cancelled)
    facts["sandbox"] = done.sandbox
    facts.update(observed_facts(args.command, records, ctx.redactor.text))
    facts["changes"] = change_entries(root, changes)
    facts["changes_complete"] = complete
    commit = commit_facts(ctx, head_before, read_head(root))
    if commit is not None:
        facts["git_commit"] = commit
    fields: dict[str, Any] = {"exit_code": done.exit_code, **output_fields(done, text),
                              "duration_ms": done.duration_ms}
    if done.timed_out:
        fields["timed_out"] = True
    if done.cancelled:
        fields["cancelled"] = True
    if done.process_cap is not None:
        cap_note = (f"The command tried to run more than {done.process_cap} processes at once and further forks "
                    "were refused; run fewer processes in parallel.")
        note = f"{note} {cap_note}" if note else cap_note
    if done.exit_code and done.sandbox.startswith(SANDBOXED):
        tmp_note = hidden_tmp_note(text, str(sandbox.tmp_dir()))
        if tmp_note:
            note = f"{note} {tmp_note}" if note else tmp_note
    if note:
        fields["note"] = note
    # Worth the model's attention when the sandbox is degraded, or when a failure may come from it (offline).
    if not done.sandbox.startswith(SANDBOXED) or (done.sandbox != SANDBOXED and done.exit_code != 0):
        fields["sandbox"] = done.sandbox
    error = _failure_sentence(done, timeout_s)
    if error:
        return ToolResult.failure(error, facts=facts, **fields)
    return ToolResult.success(facts=facts, **fields)


TOOLS: list[Tool] = [
    Tool(
        name="run_command",
        description=(
            "Run a bash command in the workspace (sandboxed: it can write only the workspace and /tmp, "
            ".git is read-only and the network is off unless the user allowed them; stdin is closed, output is "
            "capped, the environment has no credentials) and get its exit code and output. It and everything it starts are killed when "
            "it ends, times out or the run is cancelled; use process_start for servers and watchers."
        ),
        args_model=RunCommandArgs,
        handler=run_command,
        parallel_safe=False,
        read_only=False,
        tags=frozenset({"core", "execution"}),
    ),
]
