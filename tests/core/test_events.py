"""Events: exact shape, seq 1..n shared with sub-agents, JSONL as they happen, redaction."""

from __future__ import annotations

import json
import threading
from pathlib import Path

from k1412_ls.core.events import META, Emitter, EventBus, JsonlSink, read_events
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


def test_a_torn_last_line_is_ignored_and_a_broken_sink_does_not_break_the_run(tmp_path: Path) -> None:
    log = tmp_path / "e.jsonl"
    calls: list[int] = []

    def broken(_event: object) -> None:
        calls.append(1)
        raise RuntimeError("disk full")

    bus = EventBus("r", "u", None, Redactor(), [broken, JsonlSink(log)])
    bus.emit("run.created", {})
    bus.emit("run.completed", {})
    assert len(calls) == 1  # disabled after its first failure
    with log.open("a") as fh:
        fh.write('{"run_id": "r", "seq": 3, "ty')
    assert [e.seq for e in read_events(log)] == [1, 2]


def test_unknown_event_types_are_refused() -> None:
    import pytest

    bus = EventBus("r", "u", None, Redactor())
    with pytest.raises(ValueError, match=r"tool\.finished"):
        bus.emit("tool.finished", {})
    assert bus.history == []


def test_a_removed_sink_gets_nothing_more_and_broken_sinks_stay_disabled() -> None:
    seen: list[int] = []
    late: list[int] = []
    failures: list[int] = []

    def broken(_event: object) -> None:
        failures.append(1)
        raise RuntimeError("boom")

    def record(event: object) -> None:
        seen.append(1)

    bus = EventBus("r", "u", None, Redactor(), [record, broken])
    bus.add_sink(lambda _e: late.append(1))
    bus.emit("run.created", {})
    bus.remove_sink(record)
    bus.emit("run.completed", {})
    assert seen == [1] and late == [1, 1]  # the later sink still runs
    assert failures == [1]  # the broken one stays off after the indices shift
