"""Events: exact shape, seq 1..n shared with sub-agents, JSONL as they happen, redaction."""

from __future__ import annotations

import json
import threading
from pathlib import Path
from typing import Any

import pytest

from k1412_ls.core.events import META, AuditFailed, Emitter, Event, EventBus, JsonlSink, read_events
from k1412_ls.text.redact import Redactor


def test_seq_shape_and_jsonl(tmp_path: Path) -> None:
    log = tmp_path / "runs" / "r.jsonl"
    sink = JsonlSink(log)
    bus = EventBus("r", "alice", "c-1", Redactor(["hunter2-secret"]), [sink])
    root = Emitter(bus)
    root("run.created", {"task": "t"})
    child = root.child("agent-1")
    child("agent.spawned", {"note": "pw is hunter2-secret"})
    lines = log.read_text().splitlines()
    assert len(lines) == 2  # written as they happen, before close
    first, second = (json.loads(line) for line in lines)
    assert set(first) == {"run_id", "seq", "ts", "type", "user", "conversation", "depth", "agent_id", "meta",
                          "payload"}
    assert first["meta"] == META and first["ts"].endswith("Z")
    assert (second["seq"], second["depth"], second["agent_id"]) == (2, 1, "agent-1")
    assert "hunter2-secret" not in lines[1]
    sink.close()


def test_concurrent_emits_keep_seq_contiguous(tmp_path: Path) -> None:
    bus = EventBus("r", "u", None, Redactor(), [JsonlSink(tmp_path / "e.jsonl")])
    threads = [threading.Thread(target=lambda: [bus.emit("tool.started", {}) for _ in range(200)])
               for _ in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    events = read_events(tmp_path / "e.jsonl")
    assert [e.seq for e in events] == list(range(1, 801))


def test_a_torn_last_line_is_ignored_and_a_failing_sink_stops_the_run_in_one_sentence(tmp_path: Path) -> None:
    log = tmp_path / "e.jsonl"
    calls: list[str] = []

    def broken(event: Event) -> None:
        calls.append(event.type)
        raise OSError(28, "No space left on device")

    bus = EventBus("r", "u", None, Redactor(), [broken, JsonlSink(log)])
    with pytest.raises(AuditFailed) as first:
        bus.emit("run.created", {})
    sentence = str(first.value)
    assert "could not record event 1 (run.created): No space left on device" in sentence
    assert sentence.startswith("The run was stopped") and sentence.endswith("unrecorded.") and "\n" not in sentence
    with pytest.raises(AuditFailed):  # never disabled: every later event stops the run again
        bus.emit("tool.started", {})
    bus.emit("run.failed", {"status": "failed", "message": sentence})  # the closing event still goes out
    assert calls == ["run.created", "tool.started", "run.failed"]
    with log.open("a") as fh:
        fh.write('{"run_id": "r", "seq": 4, "ty')
    assert [e.type for e in read_events(log)] == ["run.created", "tool.started", "run.failed"]


def test_a_log_on_a_full_disk_stops_the_run_and_keeps_only_whole_lines(tmp_path: Path) -> None:
    full = JsonlSink(Path("/dev/full"))  # every write fails with ENOSPC, as on a full disk
    bus = EventBus("r", "u", None, Redactor(), [full, JsonlSink(tmp_path / "e.jsonl")])
    with pytest.raises(AuditFailed, match="the event log /dev/full could not record event 1"):
        bus.emit("run.created", {"task": "t"})
    assert bus.failure is not None and [e.seq for e in read_events(tmp_path / "e.jsonl")] == [1]


def test_unknown_event_types_are_refused() -> None:
    import pytest

    bus = EventBus("r", "u", None, Redactor())
    with pytest.raises(ValueError, match=r"tool\.finished"):
        bus.emit("tool.finished", {})
    assert bus.history == []


def test_a_removed_sink_gets_nothing_more() -> None:
    seen: list[int] = []
    late: list[int] = []

    def record(event: object) -> None:
        seen.append(1)

    bus = EventBus("r", "u", None, Redactor(), [record])
    bus.add_sink(lambda _e: late.append(1))
    bus.emit("run.created", {})
    bus.remove_sink(record)
    bus.emit("run.completed", {})
    assert seen == [1] and late == [1, 1]  # the later sink still runs


def test_a_sink_failing_mid_run_stops_it_before_the_command_runs_and_the_log_says_why(tmp_path: Path) -> None:
    import asyncio

    from k1412_ls.catalog import default_registry
    from k1412_ls.config import build_config
    from k1412_ls.core.run_request import RunRequest
    from k1412_ls.core.runtime import Runtime
    from tests.support.scripted_model import ScriptedChatModel

    script = [{"tool_calls": [{"name": "list_files", "arguments": {}}]},
              {"tool_calls": [{"name": "run_command", "arguments": {"command": "rm README.md"}}]},
              {"content": "Deleted README.md.", "repeat": True}]

    def run(ws: Path, sinks: list[Any]) -> Any:
        ws.mkdir()
        (ws / "README.md").write_text("readme\n")
        runtime = Runtime(build_config({}), lambda _c, _s: ScriptedChatModel(script), tmp_path / "state",
                          default_registry())
        return asyncio.run(runtime.run(RunRequest(task="Delete README.md.", workspace=ws), sinks=sinks))

    control = run(tmp_path / "control", [])
    assert control.status == "completed" and not (tmp_path / "control" / "README.md").exists()

    def full_after_listing(event: Event) -> None:
        if event.type == "tool.started" and event.payload.get("tool") == "run_command":
            raise OSError(28, "No space left on device")

    result = run(tmp_path / "ws", [full_after_listing])
    assert result.status == "failed" and (tmp_path / "ws" / "README.md").exists()  # the command never ran
    assert "could not record event" in result.message and "(tool.started): No space left on device" in result.message
    logged = read_events(Path(result.events_path))
    assert logged[-1].type == "run.failed" and logged[-1].payload["message"] == result.message
    assert [e.payload["tool"] for e in logged if e.type == "tool.completed"] == ["list_files"]
