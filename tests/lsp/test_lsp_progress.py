"""End to end: work-done progress (client and server tokens) and the k1412/event stream."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest
from lsprotocol import types

from k1412_ls.lsp import constants as c
from tests.support.lsp_client import CLIENT_NAMES, lsp_session

pytestmark = pytest.mark.e2e

TASK = "Create hello.py that prints hello, then run it."
SCRIPT = [
    {"tool_calls": [{"name": "write_file", "arguments": {"path": "hello.py", "content": "print('hello')\n"}}]},
    {"tool_calls": [{"name": "run_command", "arguments": {"command": "python3 hello.py"}}]},
    {"content": "Created hello.py and ran it: it printed hello."},
]


def _kinds(reports: list[object]) -> list[str]:
    return [type(report).__name__.removeprefix("WorkDoneProgress") for report in reports]


@pytest.mark.parametrize("client", CLIENT_NAMES)
async def test_progress_on_the_request_token_reports_every_event_with_the_verification(
        tmp_path: Path, client: str) -> None:
    async with lsp_session(tmp_path, SCRIPT, client=client) as session:
        result = await session.command(c.CMD_RUN_TASK, {"task": TASK}, token="tok-run-1")
        assert result["status"] == "completed", result

        reports = session.client.progress_reports["tok-run-1"]
        events = list(session.events)
        kinds = _kinds(reports)
        assert kinds == ["Begin", *["Report"] * len(events), "End"]
        begin, *middle, end = reports
        assert begin.title == f"K1412: {TASK}"
        assert begin.cancellable is True
        # The verification state travels with every report: missing evidence first, proof at the end.
        assert "missing:" in middle[1].message
        write = next(r.message for r in middle if r.message.startswith("✓ write_file"))
        assert "hello.py" in write and "evidence" in write
        proved = len(result["evidence"]["required"])
        assert proved >= 2 and result["evidence"]["missing"] == []
        assert middle[-1].message.startswith(f"✓ completed · evidence {proved}/{proved}")
        assert end.message == f"completed · evidence {proved}/{proved}"


@pytest.mark.parametrize("client", CLIENT_NAMES)
async def test_events_carry_seq_one_to_n_and_match_the_run_log(tmp_path: Path, client: str) -> None:
    async with lsp_session(tmp_path, SCRIPT, client=client) as session:
        result = await session.command(c.CMD_RUN_TASK, {"task": TASK})
        events = list(session.events)
        assert [event.seq for event in events] == list(range(1, len(events) + 1))
        assert {event.run_id for event in events} == {result["run_id"]}
        assert events[0].type == "run.created" and events[-1].type == "run.completed"
        logged = Path(result["events_path"]).read_text(encoding="utf-8").splitlines()
        assert len(logged) == len(events)
        write = next(e for e in events if e.type == "tool.started" and e.payload.tool == "write_file")
        # Bodies are published as size and hash only.
        assert write.payload.args.content.bytes == len("print('hello')\n")


@pytest.mark.parametrize("client", CLIENT_NAMES)
async def test_without_a_request_token_the_server_creates_one(tmp_path: Path, client: str) -> None:
    async with lsp_session(tmp_path, SCRIPT, client=client) as session:
        result = await session.command(c.CMD_RUN_TASK, {"task": TASK})
        assert result["status"] == "completed"
        (token,) = session.client.progress_reports
        assert str(token).startswith("k1412-")
        kinds = _kinds(session.client.progress_reports[token])
        assert kinds[0] == "Begin" and kinds[-1] == "End" and set(kinds[1:-1]) == {"Report"}


async def test_two_runs_in_flight_keep_separate_streams_and_the_server_answers_meanwhile(tmp_path: Path) -> None:
    script = [{"repeat": True, "delay_s": 1.0, "content": "Hello there."}]
    async with lsp_session(tmp_path, script) as session:
        _, first = session.send_command(c.CMD_RUN_TASK, {"task": "Say hello."}, token="tok-a")
        _, second = session.send_command(c.CMD_RUN_TASK, {"task": "Say hello again."}, token="tok-b")
        models = await session.command(c.CMD_LIST_MODELS, {}, timeout=5)
        assert any(model["id"] == "scripted" for model in models)
        assert not first.done() and not second.done()
        one, two = await asyncio.wait_for(asyncio.gather(first, second), 30)
        assert one["run_id"] != two["run_id"]
        for token, result in (("tok-a", one), ("tok-b", two)):
            reports = session.client.progress_reports[token]
            assert isinstance(reports[-1], types.WorkDoneProgressEnd)
            seqs = [e.seq for e in session.events if e.run_id == result["run_id"]]
            assert seqs == list(range(1, len(seqs) + 1))


async def test_delegate_progress_names_the_missing_evidence_once_per_message(tmp_path: Path) -> None:
    # The review first answers without reading anything: the rejection and every later report carry
    # the verification state, and each says it once.
    script = [
        {"content": "Looks fine to me."},
        {"tool_calls": [{"name": "read_file", "arguments": {"path": "calc.py"}}]},
        {"content": "Reviewed: divide() does not handle b == 0."},
    ]
    async with lsp_session(tmp_path, script) as session:
        (session.root / "calc.py").write_text("def divide(a, b):\n    return a / b\n", encoding="utf-8")
        uri = session.editor.open(session.root / "calc.py")
        selection = {"start": {"line": 0, "character": 0}, "end": {"line": 1, "character": 16}}
        result = await session.command(c.CMD_DELEGATE, {"uri": uri, "range": selection}, token="tok-review")
        assert result["status"] == "completed", result
        messages = [r.message for r in session.client.progress_reports["tok-review"][1:-1]]
        rejected = [m for m in messages if "completion rejected" in m]
        assert rejected and "missing:" in rejected[0], messages
        for message in messages:
            assert message.count("evidence ") <= 1 and message.count("missing:") <= 1, message
