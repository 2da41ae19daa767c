"""The evidence ledger and gate over real event streams: ordering, threads, scoping, state and replay."""

from __future__ import annotations

import random
import threading
from pathlib import Path
from typing import Any

import pytest

from k1412_ls.catalog import default_registry
from k1412_ls.core.events import Event, EventBus, JsonlSink, read_events
from k1412_ls.core.evidence import (
    CompletionGate,
    EvidenceLedger,
    compare_with_recorded,
    derive_requirements,
    recheck,
)
from k1412_ls.core.evidence.invocations import command_shape, same_work
from k1412_ls.text.numbers import extract_measurements, extract_numbers
from k1412_ls.text.redact import Redactor
from k1412_ls.tools.facts import exec_facts, write_entry, write_facts
from k1412_ls.tools.files.documents import DiskDocumentStore
from k1412_ls.tools.files.workspace import Workspace
from k1412_ls.tools.registry import ToolContext


def new_bus(task: str, sinks: list[Any] | None = None) -> EventBus:
    bus = EventBus(run_id="r-42", user="bob", conversation=None, redactor=Redactor(), sinks=list(sinks or []))
    bus.emit("run.created", {"task": task, "model": "scripted"})
    return bus


def tool(bus: EventBus, name: str, ok: bool, facts: dict[str, Any], *, depth: int = 0,
         agent_id: str | None = None) -> Event:
    return bus.emit("tool.completed", {"call_id": f"c{len(bus.history)}", "tool": name, "ok": ok, "args": {},
                                       "facts": facts, "queue_ms": 0.0, "run_ms": 1.0},
                    depth=depth, agent_id=agent_id)


def write(bus: EventBus, path: str, text: str, **kw: Any) -> Event:
    return tool(bus, "write_file", True, write_facts([write_entry(path, text, "create")]), **kw)


def run(bus: EventBus, command: str, exit_code: int = 0, output: str = "", **kw: Any) -> Event:
    return tool(bus, "run_command", exit_code == 0, exec_facts(command, ".", exit_code, output), **kw)


def read(bus: EventBus, path: str, **kw: Any) -> Event:
    return tool(bus, "read_file", True, {"kind": "read", "paths": [path]}, **kw)


def finish(bus: EventBus, answer: str, status: str) -> None:
    bus.emit("model.responded", {"iteration": 3, "ok": True, "content": answer, "tool_calls": []})
    bus.emit(f"run.{status}", {"status": status, "message": answer})


def test_shuffled_and_duplicated_events_give_the_same_verdict() -> None:
    bus = new_bus("Create hello.py and run it")
    read(bus, "hello.py")  # before the write: proves nothing
    write(bus, "hello.py", "print('hi')\n")
    run(bus, "python hello.py", 0, "hi")
    in_order = EvidenceLedger()
    for event in bus.history:
        in_order.record(event)
    shuffled = EvidenceLedger()
    events = list(bus.history) * 2
    random.Random(7).shuffle(events)
    for event in events:
        shuffled.record(event)
    gate = CompletionGate(derive_requirements("Create hello.py and run it"))
    assert gate.check(in_order, "done").complete
    assert gate.check(shuffled, "done") == gate.check(in_order, "done")
    assert len(shuffled.writes) == 1 and len(shuffled.runs) == 1


def test_a_run_recorded_before_the_write_does_not_verify_it() -> None:
    ledger = EvidenceLedger()
    bus = new_bus("Create hello.py and run it", [ledger.record])
    run(bus, "python hello.py", 0, "hi")
    write(bus, "hello.py", "print('hi')\n")
    verdict = CompletionGate(derive_requirements("Create hello.py and run it")).check(ledger, "done")
    assert not verdict.complete
    assert verdict.missing_kinds == ["artifact"]


def test_events_from_many_threads_are_all_recorded() -> None:
    ledger = EvidenceLedger()
    bus = new_bus("Run the tests", [ledger.record])

    def worker(index: int) -> None:
        for _ in range(25):
            run(bus, f"pytest tests/test_{index}.py", 0, "ok")

    threads = [threading.Thread(target=worker, args=(i,)) for i in range(8)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert len(ledger.runs) == 200
    seqs = [entry.seq for entry in ledger.snapshot()[2]]
    assert seqs == sorted(seqs) and len(set(seqs)) == 200


def test_state_tracks_progress_and_remembers_the_last_answer() -> None:
    task = "How fast is sort.py? Time it."
    ledger = EvidenceLedger()
    bus = new_bus(task, [ledger.record])
    gate = CompletionGate(derive_requirements(task))
    assert gate.state(ledger)["required"] == ["execution", "benchmark"]
    assert gate.state(ledger)["satisfied"] == []
    run(bus, "python sort.py", 0, "took 0.42 s")
    assert gate.state(ledger)["satisfied"] == ["execution"]
    assert gate.check(ledger, "It took 0.42 s.").complete
    # The state reported at the end agrees with the verdict that ended the run.
    state = gate.state(ledger)
    assert {k: state[k] for k in ("required", "satisfied", "missing")} == {
        "required": ["execution", "benchmark"], "satisfied": ["execution", "benchmark"], "missing": []}
    assert all(item.startswith("✓") for item in state["contract"]), state["contract"]


def test_sub_agent_scope_counts_only_its_own_events() -> None:
    task = "Run the tests"
    bus = new_bus(task)
    run(bus, "pytest", 0, "3 passed in 0.01s")  # the parent's run
    read(bus, "tests/test_a.py", depth=1, agent_id="sub-1")
    whole_run = EvidenceLedger()
    sub_only = EvidenceLedger(agent_id="sub-1")
    for event in bus.history:
        whole_run.record(event)
        sub_only.record(event)
    gate = CompletionGate(derive_requirements(task))
    assert gate.check(whole_run, "ok").complete
    assert gate.check(sub_only, "ok").missing_kinds == ["execution", "tests"]


def test_cancelled_and_killed_background_processes_prove_nothing() -> None:
    ledger = EvidenceLedger()
    bus = new_bus("Start the dev server in the background", [ledger.record])
    base = {"kind": "process", "process_id": "p1", "command": "npm run dev", "output": "", "numbers": []}
    tool(bus, "process_start", True, {**base, "op": "start", "status": "running", "exit_code": None})
    tool(bus, "process_cancel", True, {**base, "op": "cancel", "status": "killed", "exit_code": -15})
    verdict = CompletionGate(derive_requirements("Start the dev server in the background")).check(ledger, "up")
    assert verdict.missing_kinds == ["execution"]


def test_events_without_facts_are_ignored() -> None:
    ledger = EvidenceLedger()
    bus = new_bus("Run the tests", [ledger.record])
    bus.emit("tool.completed", {"call_id": "c1", "tool": "run_command", "ok": False, "args": {},
                                "error": "Bare interactive commands are refused; pass a script.", "queue_ms": 0,
                                "run_ms": 0})
    tool(bus, "update_plan", True, {"kind": "state"})
    assert ledger.snapshot() == ([], [], [])


def test_replay_from_a_jsonl_log_agrees_with_the_recorded_status(tmp_path: Path) -> None:
    log_path = tmp_path / "runs" / "r-42.jsonl"
    sink = JsonlSink(log_path)
    bus = new_bus("创建一个名为 data.csv 的文件", [sink])
    write(bus, "data.csv", "a,b\n1,2\n")
    read(bus, "data.csv")
    finish(bus, "已创建 data.csv。", "completed")
    sink.close()
    events = read_events(log_path)
    assert recheck(events).complete
    comparison = compare_with_recorded(events)
    assert (comparison.recorded, comparison.recomputed, comparison.agrees) == ("completed", "completed", True)


def test_replay_catches_a_forged_completed_status(tmp_path: Path) -> None:
    log_path = tmp_path / "forged.jsonl"
    sink = JsonlSink(log_path)
    bus = new_bus("Create hello.py that prints hello", [sink])
    write(bus, "hello.py", "print('hello')\n")
    finish(bus, "Created hello.py.", "completed")
    sink.close()
    with log_path.open("a", encoding="utf-8") as fh:
        fh.write('{"run_id": "r-42", "seq": 99, "ty')  # a torn last line, as after a crash
    comparison = compare_with_recorded(read_events(log_path))
    assert comparison.recorded == "completed" and comparison.recomputed == "unverified"
    assert comparison.agrees is False
    assert "DISAGREES" in comparison.describe()
    assert comparison.verdict.missing == [
        "artifact: hello.py was written but never verified afterwards (read it back, run it, or git diff)"]


def test_replay_of_a_failed_run_is_not_compared() -> None:
    bus = new_bus("Run the tests")
    bus.emit("run.failed", {"status": "failed", "message": "The provider refused the key."})
    comparison = compare_with_recorded(list(bus.history))
    assert comparison.recorded == "failed" and comparison.agrees is None


def test_replay_uses_the_last_tool_free_answer_of_the_root_agent() -> None:
    bus = new_bus("How fast is sort.py? Time it.")
    run(bus, "python sort.py", 0, "took 0.42 s")
    bus.emit("model.responded", {"iteration": 1, "ok": True, "content": "about 0.4 s", "tool_calls": []})
    bus.emit("model.responded", {"iteration": 1, "ok": True, "content": "sub answer 9.9 s", "tool_calls": []},
             depth=1, agent_id="sub-1")
    assert not recheck(list(bus.history)).complete
    bus.emit("model.responded", {"iteration": 2, "ok": True, "content": "It took 0.42 s.", "tool_calls": []})
    bus.emit("run.completed", {"status": "completed", "message": "It took 0.42 s."})
    assert recheck(list(bus.history)).complete


def _resolved(failed: str, later: str) -> bool:
    return same_work(command_shape(failed), command_shape(later))


def test_failure_resolution_rule() -> None:
    table = [
        ("pytest tests/test_x.py", "pytest", True),
        ("python -m pytest -q", "pytest tests", True),
        ("python hello.py", "python3 hello.py --name x", True),
        ("cd app && npm test", "npm test", True),
        ("npm test", "npm install", False),
        ("python a.py", "python b.py", False),
        ("make test", "make", False),
        ("./run.sh", "bash run.sh", True),
        ("FOO=1 timeout 30 cargo test", "cargo test --release", True),
    ]
    assert [(f, later, _resolved(f, later)) for f, later, _ in table] == table


def test_command_roles() -> None:
    roles = {cmd: command_shape(cmd).role for cmd in [
        "ls -la", "grep -r foo .", "python -c 'import sys'", "git status", "python --version",
        "pip install -r requirements.txt", "python -m pip install x", "npm ci",
        "pytest", "python hello.py", "./build.sh", "cat out.txt | python parse.py", "node server.js",
    ]}
    assert roles == {
        "ls -la": "probe", "grep -r foo .": "probe", "python -c 'import sys'": "print", "git status": "probe",
        "python --version": "probe", "pip install -r requirements.txt": "setup", "python -m pip install x": "setup",
        "npm ci": "setup", "pytest": "test", "python hello.py": "run", "./build.sh": "run",
        "cat out.txt | python parse.py": "run", "node server.js": "run",
    }


@pytest.mark.parametrize(("text", "measurements"), [
    ("took 12 ms and 0.53s", ["12", "0.53"]),
    ("Python 3.11 on v1.2, git 2.39.1, host 127.0.0.1", []),
    ("1. Setup\n2. Results: 45% faster, 3x", ["45", "3"]),
    ("## 2.1 Results\nmean 1.234 s", ["1.234"]),
    ("in 2024 we ran 1,234.5 ops/s over 8 runs", ["1234.5"]),
    ("耗时 12 毫秒，快 2.5 倍", ["12", "2.5"]),
    ("| quick | -0.056 |", ["0.056"]),
])
def test_measurements_skip_numbering_years_and_versions(text: str, measurements: list[str]) -> None:
    assert extract_measurements(text) == measurements
    # Every measurement is also a plain number of the same text, so copied figures always match.
    assert set(measurements) <= set(extract_numbers(text))


def test_real_tools_produce_facts_the_gate_understands(tmp_path: Path) -> None:
    task = "Benchmark bench.py and write a report to report.md"
    ledger = EvidenceLedger()
    bus = new_bus(task, [ledger.record])
    registry = default_registry()
    ctx = ToolContext(workspace=Workspace(tmp_path), documents=DiskDocumentStore())
    gate = CompletionGate(derive_requirements(task))

    def call(name: str, args: dict[str, Any]) -> None:
        result = registry.execute(name, args, ctx)
        tool(bus, name, result.ok, result.facts)

    call("write_file", {"path": "bench.py", "content": "print('took 0.123 s')\n"})
    call("run_command", {"command": "python3 bench.py"})
    call("write_file", {"path": "report.md", "content": "# Report 2024\n1. bench: 0.125 s\n"})
    call("read_file", {"path": "report.md"})
    assert gate.check(ledger, "done").missing == [
        "benchmark: report.md states 0.125, which no successful command printed"]
    call("patch_file", {"path": "report.md", "edits": [{"old_text": "0.125", "new_text": "0.123"}]})
    call("read_file", {"path": "report.md"})
    verdict = gate.check(ledger, "done")
    assert verdict.complete, verdict.missing
    assert verdict.required == ["artifact", "execution", "report", "benchmark"]
