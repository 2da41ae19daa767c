"""run_command: real bash processes in a temp workspace, results as the model sees them."""

from __future__ import annotations

import threading
import time
from pathlib import Path

import pytest

from k1412_ls.text.redact import Redactor
from k1412_ls.tools.files.documents import DiskDocumentStore
from k1412_ls.tools.files.workspace import Workspace
from k1412_ls.tools.processes import run_command
from k1412_ls.tools.registry import ToolContext, ToolRegistry, ToolResult
from k1412_ls.tools.sandbox.command_sandbox import SandboxPolicy

REGISTRY = ToolRegistry(run_command.TOOLS)


@pytest.fixture
def ctx(tmp_path: Path) -> ToolContext:
    ws = tmp_path / "ws"
    ws.mkdir()
    return ToolContext(workspace=Workspace(ws), documents=DiskDocumentStore(), run_id="r-test")


def run(ctx: ToolContext, **arguments: object) -> ToolResult:
    return REGISTRY.execute("run_command", dict(arguments), ctx)


def test_success_reports_exit_code_output_and_duration(ctx: ToolContext) -> None:
    result = run(ctx, command="echo hello; echo world")
    assert result.data["ok"] is True
    assert result.data["exit_code"] == 0
    assert result.data["output"] == "hello\nworld\n"
    assert result.data["output_bytes"] == 12
    assert "omitted_bytes" not in result.data
    assert isinstance(result.data["duration_ms"], int)
    assert result.facts["kind"] == "exec"
    assert result.facts["exit_code"] == 0
    assert result.facts["cwd"] == "."


@pytest.mark.parametrize(
    ("command", "exit_code"),
    [
        ("true", 0),
        ("false", 1),
        ("exit 3", 3),
        ("false | true", 1),  # pipefail: a failing stage fails the pipeline
        ("true | false | true", 1),
        ("definitely-not-a-command-k1412", 127),
        ("kill -TERM $$", 143),
        ("kill -KILL $$", 137),
        ("yes | head -c 1 >/dev/null", 141),  # yes dies of SIGPIPE, pipefail reports it
    ],
)
def test_exit_codes_are_real(ctx: ToolContext, command: str, exit_code: int) -> None:
    result = run(ctx, command=command)
    assert result.data["exit_code"] == exit_code
    assert result.data["ok"] is (exit_code == 0)
    if exit_code:
        assert str(exit_code) in result.data["error"]


def test_command_not_found_says_so(ctx: ToolContext) -> None:
    result = run(ctx, command="definitely-not-a-command-k1412 --flag")
    assert "command not found" in result.data["error"]


def test_stdout_and_stderr_are_interleaved_in_order(ctx: ToolContext) -> None:
    result = run(ctx, command="echo one; echo two >&2; echo three; echo four >&2")
    assert result.data["output"] == "one\ntwo\nthree\nfour\n"


def test_cwd_inside_workspace(ctx: ToolContext) -> None:
    sub = ctx.workspace.root / "pkg" / "src"
    sub.mkdir(parents=True)
    result = run(ctx, command="pwd", cwd="pkg/src")
    assert result.data["output"].strip() == str(sub)
    assert result.facts["cwd"] == "pkg/src"


@pytest.mark.parametrize("cwd", ["missing-dir", "file.txt"])
def test_cwd_must_be_an_existing_directory(ctx: ToolContext, cwd: str) -> None:
    (ctx.workspace.root / "file.txt").write_text("x")
    result = run(ctx, command="touch created-here", cwd=cwd)
    assert result.data["ok"] is False
    assert "not an existing directory" in result.data["error"]
    assert not (ctx.workspace.root / "created-here").exists()


@pytest.mark.e2e
def test_timeout_kills_and_reports_truthfully(ctx: ToolContext) -> None:
    started = time.monotonic()
    result = run(ctx, command="echo started; sleep 30", timeout_s=1)
    assert time.monotonic() - started < 15
    assert result.data["ok"] is False
    assert result.data["timed_out"] is True
    assert result.data["error"].startswith("The command timed out after 1 s and its processes were killed;")
    assert result.data["output"] == "started\n"
    assert result.facts["timed_out"] is True
    assert result.facts["exit_code"] is None


def test_timeout_above_maximum_is_clamped_and_said(ctx: ToolContext) -> None:
    result = run(ctx, command="true", timeout_s=5000)
    assert result.data["ok"] is True
    assert "900" in result.data["note"]


@pytest.mark.parametrize("timeout_s", [0, -5])
def test_non_positive_timeout_is_rejected(ctx: ToolContext, timeout_s: float) -> None:
    result = run(ctx, command="true", timeout_s=timeout_s)
    assert result.data["ok"] is False
    assert "timeout_s" in result.data["error"]


@pytest.mark.e2e
def test_cancel_during_command_kills_it_promptly(ctx: ToolContext) -> None:
    timer = threading.Timer(0.5, ctx.cancel.set)
    timer.start()
    started = time.monotonic()
    result = run(ctx, command="sleep 60")
    timer.join()
    assert time.monotonic() - started < 15
    assert result.data["ok"] is False
    assert result.data["cancelled"] is True
    assert "cancelled" in result.data["error"]
    assert result.facts["cancelled"] is True


def test_cancel_before_start_runs_nothing(ctx: ToolContext) -> None:
    ctx.cancel.set()
    result = run(ctx, command="touch should-not-exist")
    assert result.data["ok"] is False
    assert not (ctx.workspace.root / "should-not-exist").exists()


def test_large_output_keeps_head_and_tail_with_byte_count(ctx: ToolContext) -> None:
    result = run(ctx, command="seq 1 2000000; echo LAST-LINE")
    data = result.data
    total = len("".join(f"{i}\n" for i in range(1, 2000001))) + len("LAST-LINE\n")
    assert data["output_bytes"] == total
    assert data["output"].startswith("1\n2\n3\n")
    assert data["output"].endswith("1999999\n2000000\nLAST-LINE\n")
    marker = f"[… {data['omitted_bytes']} bytes omitted …]"
    assert marker in data["output"]
    kept = len(data["output"].encode()) - len(marker.encode()) - 2
    assert kept + data["omitted_bytes"] == total


def test_output_and_facts_are_redacted(ctx: ToolContext) -> None:
    ctx.redactor = Redactor(["literal-canary-value"])
    secret = "sk-proj-" + "A1b2C3d4E5f6G7h8I9j0_-xyz"
    result = run(ctx, command=f"echo key={secret}; echo literal-canary-value")
    assert secret not in result.to_message()
    assert "literal-canary-value" not in result.to_message()
    assert "[REDACTED]" in result.data["output"]
    assert secret not in str(result.facts)


def test_run_env_is_used_but_scrubbed(ctx: ToolContext) -> None:
    ctx.env = {"PATH": "/usr/bin:/bin", "CC": "clang", "PROJECT_MODE": "ci-mode", "OPENAI_API_KEY": "plainvalue-123456"}
    command = "echo cc=$CC mode=$PROJECT_MODE key=${OPENAI_API_KEY:-unset} prompt=$GIT_TERMINAL_PROMPT"
    result = run(ctx, command=command)
    assert result.data["output"] == "cc=clang mode= key=unset prompt=0\n"  # an unlisted name is not passed
    ctx.services.sandbox = SandboxPolicy(env=("PROJECT_MODE", "OPENAI_API_KEY"))  # the user's [sandbox] env
    ctx.services.child_env = None
    result = run(ctx, command=command)
    assert result.data["output"] == "cc=clang mode=ci-mode key=unset prompt=0\n"  # provider keys never


def test_utf8_output_is_preserved(ctx: ToolContext) -> None:
    result = run(ctx, command="printf 'héllo wörld 你好 🎉\\n'")
    assert result.data["output"] == "héllo wörld 你好 🎉\n"


def test_invalid_arguments_are_one_sentence(ctx: ToolContext) -> None:
    result = run(ctx, command="true", shell="zsh")
    assert result.data["ok"] is False
    assert "run_command" in result.data["error"]


def test_tool_metadata_matches_the_contract() -> None:
    tool = REGISTRY.get("run_command")
    assert tool is not None
    assert tool.is_parallel_safe({}) is False
    assert tool.tags == frozenset({"core", "execution"})
    params = tool.schema()["function"]["parameters"]
    assert set(params["properties"]) == {"command", "cwd", "timeout_s"}
    assert params["additionalProperties"] is False


def test_values_the_redactor_knows_never_reach_the_child(ctx: ToolContext, monkeypatch: pytest.MonkeyPatch) -> None:
    # A provider configured with api_key_env = "MINEPROV": the name looks harmless, the value is known.
    monkeypatch.setenv("MINEPROV", "configured-provider-key-0042")
    ctx.redactor = Redactor(["configured-provider-key-0042"])
    output = run(ctx, command="env").data["output"]
    assert "MINEPROV" not in output
    assert "PATH=" in output
