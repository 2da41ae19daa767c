"""Background processes: start, poll, cancel and kill_all with real processes."""

from __future__ import annotations

import threading
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from k1412_ls.tools.files.documents import DiskDocumentStore
from k1412_ls.tools.files.workspace import Workspace
from k1412_ls.tools.ports import RunServices, required
from k1412_ls.tools.processes import process_tools
from k1412_ls.tools.processes.process_tools import ProcessTable
from k1412_ls.tools.registry import ToolContext, ToolRegistry, ToolResult

REGISTRY = ToolRegistry(process_tools.TOOLS)


@pytest.fixture
def ctx(tmp_path: Path) -> Iterator[ToolContext]:
    ws = tmp_path / "ws"
    ws.mkdir()
    table = ProcessTable()
    context = ToolContext(workspace=Workspace(ws), documents=DiskDocumentStore(), run_id="r-proc",
                          services=RunServices(processes=table))
    yield context
    table.kill_all()


def call(ctx: ToolContext, tool: str, **arguments: object) -> ToolResult:
    return REGISTRY.execute(tool, dict(arguments), ctx)


def start(ctx: ToolContext, command: str, **extra: object) -> str:
    result = call(ctx, "process_start", command=command, **extra)
    assert result.data["ok"] is True, result.data
    return str(result.data["process_id"])


def poll_until(ctx: ToolContext, pid: str, needle: str, limit_s: float = 10.0) -> str:
    """Accumulate polled output until ``needle`` shows up."""
    seen = ""
    deadline = time.monotonic() + limit_s
    while needle not in seen and time.monotonic() < deadline:
        seen += call(ctx, "process_poll", process_id=pid).data["output"]
        time.sleep(0.05)
    return seen


@pytest.mark.e2e
def test_start_returns_short_unique_ids(ctx: ToolContext) -> None:
    first = call(ctx, "process_start", command="sleep 5", name="server")
    second = call(ctx, "process_start", command="sleep 5")
    assert first.data == {"ok": True, "process_id": "p1", "status": "running", "name": "server"}
    assert second.data["process_id"] == "p2"
    assert first.facts["kind"] == "process" and first.facts["op"] == "start"


def test_poll_waits_for_exit_and_reports_output(ctx: ToolContext) -> None:
    pid = start(ctx, "echo hello; sleep 0.3; echo done")
    started = time.monotonic()
    result = call(ctx, "process_poll", process_id=pid, wait_s=20)
    assert time.monotonic() - started < 15  # returned when the process exited, not after 20 s
    assert result.data["ok"] is True
    assert result.data["status"] == "exited"
    assert result.data["exit_code"] == 0
    assert result.data["output"] == "hello\ndone\n"
    assert result.facts["op"] == "poll" and result.facts["status"] == "exited"


def test_poll_returns_only_new_output(ctx: ToolContext) -> None:
    gate = ctx.workspace.root / "gate"
    pid = start(ctx, f"echo first; while [ ! -e {gate} ]; do sleep 0.05; done; echo second")
    assert poll_until(ctx, pid, "first") == "first\n"
    running = call(ctx, "process_poll", process_id=pid)
    assert running.data["status"] == "running"
    assert running.data["exit_code"] is None
    gate.touch()
    final = call(ctx, "process_poll", process_id=pid, wait_s=10)
    assert final.data["output"] == "second\n"
    assert final.data["status"] == "exited"


def test_poll_after_exit_is_stable(ctx: ToolContext) -> None:
    pid = start(ctx, "echo once; exit 0")
    call(ctx, "process_poll", process_id=pid, wait_s=10)
    again = call(ctx, "process_poll", process_id=pid)
    assert again.data["ok"] is True
    assert again.data["status"] == "exited"
    assert again.data["exit_code"] == 0
    assert again.data["output"] == ""


def test_failed_process_poll_is_not_ok(ctx: ToolContext) -> None:
    pid = start(ctx, "echo broken >&2; exit 4")
    result = call(ctx, "process_poll", process_id=pid, wait_s=10)
    assert result.data["ok"] is False
    assert result.data["exit_code"] == 4
    assert "exited with code 4" in result.data["error"]
    assert result.data["output"] == "broken\n"


def test_cancel_twice_is_idempotent(ctx: ToolContext) -> None:
    pid = start(ctx, "echo up; sleep 60")
    poll_until(ctx, pid, "up")
    first = call(ctx, "process_cancel", process_id=pid)
    assert first.data["ok"] is True
    assert first.data["status"] == "killed"
    second = call(ctx, "process_cancel", process_id=pid)
    assert second.data["ok"] is True
    assert second.data["already_ended"] is True
    assert "already ended" in second.data["message"]
    assert call(ctx, "process_poll", process_id=pid).data["status"] == "killed"


@pytest.mark.e2e
@pytest.mark.parametrize("tool", ["process_poll", "process_cancel"])
def test_unknown_id_lists_known_ids(ctx: ToolContext, tool: str) -> None:
    start(ctx, "sleep 5")
    start(ctx, "sleep 5")
    result = call(ctx, tool, process_id="p9")
    assert result.data["ok"] is False
    assert result.data["error"] == "Unknown process id 'p9'; use one of: p1, p2."


def test_unknown_id_without_processes_says_how_to_start(ctx: ToolContext) -> None:
    result = call(ctx, "process_poll", process_id="p1")
    assert result.data["ok"] is False
    assert "process_start" in result.data["error"]


def test_chatty_process_never_blocks_and_memory_stays_capped(ctx: ToolContext) -> None:
    pid = start(ctx, "yes | head -c 5000000; echo finished")
    result = call(ctx, "process_poll", process_id=pid, wait_s=25)
    assert result.data["status"] == "exited"
    assert result.data["output_bytes"] == 5000000 + len("finished\n")
    assert result.data["output"].endswith("y\nfinished\n")
    assert f"[… {result.data['omitted_bytes']} bytes omitted …]" in result.data["output"]
    assert len(result.data["output"]) < 200_000


def test_polls_run_in_parallel(ctx: ToolContext) -> None:
    slow = start(ctx, "sleep 60")
    quick = start(ctx, "echo ready; sleep 60")
    waiting = threading.Thread(target=call, args=(ctx, "process_poll"), kwargs={"process_id": slow, "wait_s": 5})
    waiting.start()
    time.sleep(0.2)
    # The first poll is still waiting; another poll must not queue behind it.
    assert poll_until(ctx, quick, "ready") == "ready\n"
    assert waiting.is_alive()
    call(ctx, "process_cancel", process_id=slow)
    waiting.join(10)
    assert not waiting.is_alive()


def test_wait_above_maximum_is_clamped_and_said(ctx: ToolContext) -> None:
    pid = start(ctx, "true")
    result = call(ctx, "process_poll", process_id=pid, wait_s=120)
    assert "30" in result.data["note"]
    assert result.data["status"] == "exited"


def test_run_cancel_interrupts_a_waiting_poll(ctx: ToolContext) -> None:
    pid = start(ctx, "sleep 60")
    threading.Timer(0.3, ctx.cancel.set).start()
    started = time.monotonic()
    result = call(ctx, "process_poll", process_id=pid, wait_s=30)
    assert time.monotonic() - started < 15
    assert result.data["status"] == "running"


@pytest.mark.e2e
def test_kill_all_stops_everything_and_closes_the_table(ctx: ToolContext) -> None:
    ids = [start(ctx, "sleep 60") for _ in range(3)]
    table = required(ctx.services.processes, "processes")
    assert sorted(table.kill_all()) == ids
    for pid in ids:
        assert call(ctx, "process_poll", process_id=pid).data["status"] == "killed"
    refused = call(ctx, "process_start", command="true")
    assert refused.data["ok"] is False
    assert "ended" in refused.data["error"]


@pytest.mark.e2e
def test_running_process_limit(ctx: ToolContext) -> None:
    table = ctx.services.processes = ProcessTable(max_running=2)
    start(ctx, "sleep 60")
    start(ctx, "sleep 60")
    refused = call(ctx, "process_start", command="sleep 60")
    assert refused.data["ok"] is False
    assert "process_cancel" in refused.data["error"]
    assert table.kill_all() == ["p1", "p2"]


def test_cwd_outside_workspace_is_refused(ctx: ToolContext) -> None:
    result = call(ctx, "process_start", command="touch escaped", cwd="..")
    assert result.data["ok"] is False
    assert "outside the workspace" in result.data["error"]
    assert not (ctx.workspace.root.parent / "escaped").exists()


def test_missing_service_is_a_clear_failure(tmp_path: Path) -> None:
    bare = ToolContext(workspace=Workspace(tmp_path), documents=DiskDocumentStore())
    result = call(bare, "process_start", command="true")
    assert result.data["ok"] is False
    assert "processes" in result.data["error"]


def test_poll_output_is_redacted(ctx: ToolContext) -> None:
    token = "ghp_" + "a1B2c3D4e5F6g7H8i9J0k1L2m3N4o5P6q7R8"
    pid = start(ctx, f"echo token={token}")
    result = call(ctx, "process_poll", process_id=pid, wait_s=10)
    assert token not in result.to_message()
    assert token not in str(result.facts)
    assert "[REDACTED]" in result.data["output"]


def test_tool_metadata_matches_the_contract() -> None:
    tools = {tool.name: tool for tool in REGISTRY}
    assert tools["process_poll"].is_parallel_safe({}) and tools["process_poll"].read_only
    assert not tools["process_start"].is_parallel_safe({})
    assert not tools["process_cancel"].is_parallel_safe({})
    for tool in tools.values():
        assert tool.tags == frozenset({"process", "execution"})
    props = {name: set(tool.schema()["function"]["parameters"]["properties"]) for name, tool in tools.items()}
    assert props == {
        "process_start": {"command", "cwd", "name"},
        "process_poll": {"process_id", "wait_s"},
        "process_cancel": {"process_id"},
    }


def test_character_split_across_polls_arrives_whole(ctx: ToolContext) -> None:
    gate = ctx.workspace.root / "gate"
    # 你 is e4 bd a0: the first two bytes arrive, then the last one after the gate opens.
    pid = start(ctx, f"printf 'ab\\xe4\\xbd'; while [ ! -e {gate} ]; do sleep 0.05; done; printf '\\xa0\\n'")
    first = poll_until(ctx, pid, "ab")
    gate.touch()
    rest = call(ctx, "process_poll", process_id=pid, wait_s=10).data["output"]
    assert first + rest == "ab你\n"


def test_capped_multibyte_output_has_no_broken_characters(ctx: ToolContext) -> None:
    pid = start(ctx, "for i in $(seq 30000); do printf '你'; done; echo")
    result = call(ctx, "process_poll", process_id=pid, wait_s=25)
    output = result.data["output"]
    assert "\ufffd" not in output
    head, _, tail = output.partition(f"\n[… {result.data['omitted_bytes']} bytes omitted …]\n")
    kept = len(head.encode()) + len(tail.encode())
    assert kept + result.data["omitted_bytes"] == result.data["output_bytes"] == 30000 * 3 + 1


def test_kill_all_handles_processes_that_ignore_sigterm(ctx: ToolContext) -> None:
    ids = [start(ctx, "trap '' TERM; echo armed; sleep 60") for _ in range(3)]
    for pid in ids:
        poll_until(ctx, pid, "armed")
    table = required(ctx.services.processes, "processes")
    started = time.monotonic()
    assert table.kill_all() == ids
    assert time.monotonic() - started < 15
    assert {call(ctx, "process_poll", process_id=pid).data["status"] for pid in ids} == {"killed"}
