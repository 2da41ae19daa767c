"""The evidence gate, case by case: request + tool events + final answer → verdict.

Each case builds a real event stream through ``EventBus`` with facts made by
the real fact builders of ``k1412_ls.tools.facts``, then asks the real gate.
``confusion_matrix()`` counts false completed / false unverified over the
whole table (``scripts/evidence_confusion.py`` prints it).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import pytest

from k1412_ls.core.events import EventBus
from k1412_ls.core.evidence import CompletionGate, EvidenceLedger, Verdict, derive_requirements, recheck
from k1412_ls.text.redact import Redactor
from k1412_ls.tools.facts import exec_facts, write_entry, write_facts

Step = Callable[["Log"], None]


class Log:
    """A run's event stream as the loop would emit it, built from tool-shaped steps."""

    def __init__(self, task: str) -> None:
        self.bus = EventBus(run_id="r-1", user="alice", conversation="c-1", redactor=Redactor())
        self.bus.emit("run.created", {"task": task, "model": "scripted"})
        self.calls = 0

    def tool(self, tool: str, ok: bool, facts: dict[str, Any], args: dict[str, Any] | None = None, *,
             depth: int = 0) -> None:
        self.calls += 1
        agent = "sub-1" if depth else None
        payload = {"call_id": f"call_{self.calls}", "tool": tool, "ok": ok, "args": args or {}, "facts": facts,
                   "queue_ms": 0.1, "run_ms": 1.0}
        if not ok:
            payload["error"] = "The tool failed; try again."
        self.bus.emit("tool.started", {"call_id": f"call_{self.calls}", "tool": tool}, depth=depth, agent_id=agent)
        self.bus.emit("tool.completed", payload, depth=depth, agent_id=agent)

    def answer(self, text: str) -> None:
        self.bus.emit("model.responded", {"iteration": 1, "ok": True, "content": text, "tool_calls": []})


def W(path: str, text: str = "x = 1\n", action: str = "create", *, depth: int = 0, ok: bool = True,
      unchanged: bool = False, tool: str = "write_file", origin: str | None = None) -> Step:
    extra = {"from": origin} if origin else {}
    entry = write_entry(path, None if action == "delete" else text, action, **extra)
    # A refused write (conflict, guard, bad path) applies nothing, so its facts list no change.
    facts = write_facts([entry] if ok else [], unchanged=unchanged)
    return lambda log: log.tool(tool, ok, facts, {"path": path}, depth=depth)


def partial_patch(applied: list[str]) -> Step:
    """An apply_patch that failed after applying some files: ok false, applied changes listed."""
    facts = write_facts([write_entry(path, "y = 2\n", "update") for path in applied])
    return lambda log: log.tool("apply_patch", False, facts, {"patch": {"bytes": 99, "sha256": "0" * 64}})


def R(path: str, *, depth: int = 0, ok: bool = True) -> Step:
    return lambda log: log.tool("read_file", ok, {"kind": "read", "paths": [path]}, {"path": path}, depth=depth)


def L(tool: str, path: str = ".", *, depth: int = 0) -> Step:
    return lambda log: log.tool(tool, True, {"kind": "inspect", "paths": [path]}, {"path": path}, depth=depth)


def G(op: str = "diff", paths: list[str] | None = None, *, path: str | None = None, depth: int = 0) -> Step:
    facts: dict[str, Any] = {"kind": "git", "op": op}
    if paths is not None:
        facts["paths"] = paths
    args = {"path": path} if path else {}
    return lambda log: log.tool(f"git_{op}", True, facts, args, depth=depth)


def X(command: str, exit_code: int | None = 0, output: str = "", *, timed_out: bool = False,
      depth: int = 0) -> Step:
    facts = exec_facts(command, ".", exit_code, output, timed_out=timed_out)
    ok = exit_code == 0 and not timed_out
    return lambda log: log.tool("run_command", ok, facts, {"command": command}, depth=depth)


def P(op: str, command: str, status: str, exit_code: int | None = None, output: str = "", *,
      pid: str = "p1") -> Step:
    facts = {"kind": "process", "op": op, "process_id": pid, "command": command, "status": status,
             "exit_code": exit_code, "output": output, "numbers": []}
    return lambda log: log.tool(f"process_{op}", True, facts, {"process_id": pid})


@dataclass(frozen=True)
class Case:
    """One row: the request, what the tools did, the final answer, and the expected verdict."""

    id: str
    task: str
    steps: tuple[Step, ...]
    complete: bool
    required: str
    missing: str = ""
    answer: str = "Done."
    says: tuple[str, ...] = field(default=())  # substrings the missing lines must contain


BENCH_OUT = "bubble: 1.234 s\nquick: 0.056 s\n"
PYTEST_OK = "...\n3 passed in 0.02s\n"
PYTEST_FAIL = "F..\nFAILED tests/test_x.py::test_a - assert 1 == 2\n1 failed, 2 passed in 0.03s\n"
ZH_BENCH_OUT = "快速排序: 0.012 秒\n冒泡排序: 1.5 秒\n"
PY = "print('hello')\n"

CASES: tuple[Case, ...] = (
    # --- artifact: write, then verify ----------------------------------------------------------
    Case("write-then-read", "Create hello.py that prints hello", (W("hello.py", PY), R("hello.py")), True,
         "artifact source"),
    Case("write-then-run", "Create hello.py that prints hello", (W("hello.py", PY), X("python hello.py", 0, "hello")),
         True, "artifact source"),
    Case("write-never-verified", "Create hello.py that prints hello", (W("hello.py", PY),), False,
         "artifact source", "artifact", says=("hello.py was written but never verified",)),
    Case("verification-before-write", "Create hello.py that prints hello", (R("hello.py"), W("hello.py", PY)), False,
         "artifact source", "artifact"),
    Case("write-then-git-status", "Create hello.py that prints hello", (W("hello.py", PY), G("status", ["hello.py"])),
         True, "artifact source"),
    Case("new-dir-in-git-status", "Create src/app/hello.py that prints hello",
         (W("src/app/hello.py", PY), G("status", ["src"])), True, "artifact source"),
    Case("git-diff-blind-to-new-file", "Create hello.py that prints hello", (W("hello.py", PY), G("diff", [])),
         False, "artifact source", "artifact"),
    Case("partial-patch-needs-verification", "Update a.py and b.py to use logging",
         (partial_patch(["a.py"]),), False, "artifact", "artifact", says=("a.py was written but never verified",)),
    Case("partial-patch-verified", "Update a.py and b.py to use logging",
         (partial_patch(["a.py", "b.py"]), G("diff", ["a.py", "b.py"])), True, "artifact"),
    Case("git-diff-of-other-path", "Create hello.py that prints hello",
         (W("hello.py", PY), G("diff", ["other.py"], path="other.py")), False, "artifact source", "artifact"),
    Case("echo-is-no-verification", "Create hello.py that prints hello", (W("hello.py", PY), X("echo done", 0, "done")),
         False, "artifact source", "artifact"),
    Case("cat-names-the-file", "Create hello.py that prints hello", (W("hello.py", PY), X("cat hello.py", 0, PY)),
         True, "artifact source"),
    Case("unchanged-write-only", "Create hello.py that prints hello",
         (R("hello.py"), W("hello.py", PY, "update", unchanged=True), R("hello.py")), False, "artifact source",
         "artifact", says=("hello.py already had the requested content",)),
    Case("unchanged-after-real-write", "Create hello.py that prints hello",
         (W("hello.py", PY), W("hello.py", PY, "update", unchanged=True), R("hello.py")), True, "artifact source"),
    Case("patched-after-verification", "Create hello.py that prints hello",
         (W("hello.py", PY), R("hello.py"), W("hello.py", "print('hi')\n", "update", tool="patch_file")), False,
         "artifact source", "artifact"),
    Case("zh-named-csv", "创建一个名为 data.csv 的文件", (W("data.csv", "a,b\n1,2\n"), R("data.csv")), True, "artifact"),
    Case("zh-wrong-file-name", "创建一个名为 data.csv 的文件", (W("other.csv", "a,b\n"), R("other.csv")), False,
         "artifact", "artifact", says=("data.csv was never changed",)),
    Case("named-target-not-written", "Create notes.txt with three ideas", (W("ideas.txt", "1\n"), R("ideas.txt")),
         False, "artifact", "artifact"),
    Case("two-files-one-run-verifies-both", "Create a.py and b.py",
         (W("a.py"), W("b.py"), X("python a.py", 0, "")), True, "artifact source"),
    Case("two-files-one-read", "Create a.py and b.py", (W("a.py"), W("b.py"), R("a.py")), False,
         "artifact source", "artifact", says=("b.py was written but never verified",)),
    Case("sub-agent-writes-and-reads", "Create hello.py that prints hello",
         (W("hello.py", PY, depth=1), R("hello.py", depth=1)), True, "artifact source"),
    Case("sub-agent-writes-root-reads", "Create hello.py that prints hello",
         (W("hello.py", PY, depth=1), R("hello.py")), True, "artifact source"),
    Case("failed-write-then-read", "Create hello.py that prints hello", (W("hello.py", PY, ok=False), R("hello.py")),
         False, "artifact source", "artifact source"),
    Case("written-file-crashes", "Create hello.py that prints hello",
         (W("hello.py", PY), X("python hello.py", 1, "SyntaxError"), R("hello.py")), False, "artifact source",
         "artifact", says=("`python hello.py`", "failed")),
    Case("crash-fixed-and-rerun", "Create hello.py that prints hello",
         (W("hello.py", PY), X("python hello.py", 1, "SyntaxError"), W("hello.py", PY + "\n", "update"),
          X("python3 hello.py", 0, "hello")), True, "artifact source"),
    Case("background-poll-verifies", "Create server.py, a tiny HTTP server",
         (W("server.py"), P("start", "python server.py", "running"), P("poll", "python server.py", "running")), True,
         "artifact source"),
    Case("delete-checked-by-git-status", "Delete old.txt", (W("old.txt", action="delete"), G("status", ["old.txt"])),
         True, "artifact deletion"),
    Case("delete-unchecked", "Delete old.txt", (W("old.txt", action="delete"),), False, "artifact deletion",
         "artifact"),
    Case("delete-of-another-file", "删掉 temp.txt", (W("other.txt", action="delete"), L("list_files")), False,
         "artifact deletion", "artifact deletion"),
    Case("rename-checked-by-git-status", "Rename a.txt to b.txt",
         (W("b.txt", "t\n", "move", tool="apply_patch", origin="a.txt"), G("status", ["a.txt", "b.txt"])), True,
         "artifact"),
    Case("update-checked-by-git-diff-of-path", "Add a docstring to utils.py",
         (R("utils.py"), W("utils.py", '"""Utils."""\n', "update"), G("diff", ["utils.py"], path="utils.py")), True,
         "artifact"),
    # --- source: code belongs in a file ---------------------------------------------------------
    Case("code-pasted-in-chat", "Write a Python script that prints the first 10 primes", (), False,
         "artifact source", "artifact source",
         answer="Here it is:\n```python\nfor n in range(2, 30):\n    print(n)\n```\n",
         says=("put the code in a file with write_file",)),
    Case("script-in-a-file", "Write a Python script that prints the first 10 primes",
         (W("primes.py"), X("python primes.py", 0, "2 3 5")), True, "artifact source"),
    Case("shebang-without-extension", "Write a script that prints primes",
         (W("primes", "#!/usr/bin/env python3\nprint(2)\n"), X("./primes", 0, "2")), True, "artifact source"),
    Case("only-a-document-written", "Write a script that prints primes", (W("notes.md", "# primes\n"), R("notes.md")),
         False, "artifact source", "source"),
    Case("zh-script-reads-input", "写一个脚本，统计 words.txt 中的单词数",
         (W("count.py"), X("python count.py words.txt", 0, "42")), True, "artifact source"),
    Case("zh-function-pasted", "写一个函数计算斐波那契数列", (), False, "artifact source", "artifact source",
         answer="```python\ndef fib(n):\n    return n\n```"),
    # --- execution: runs must succeed, failures must be resolved --------------------------------
    Case("tests-pass", "Run the tests", (X("pytest", 0, PYTEST_OK),), True, "execution tests"),
    Case("tests-pass-without-summary", "Run the tests", (X("pytest", 0, ""),), False, "execution tests",
         "execution tests", says=("no test summary",)),
    Case("failed-test-never-resolved", "Run the tests", (X("pytest", 1, PYTEST_FAIL),), False, "execution tests",
         "execution", says=("but the answer does not say so",)),
    Case("failed-test-reported-as-finding", "Run the tests", (X("pytest", 1, PYTEST_FAIL),), True,
         "execution tests claims", answer="1 test fails: test_a asserts 1 == 2."),
    Case("failed-test-reported-as-passing", "Run the tests", (X("pytest", 1, PYTEST_FAIL),), False,
         "execution tests claims", "execution claims", answer="All tests pass."),
    Case("failed-test-resolved-by-broader-run", "Fix the failing test",
         (X("pytest tests/test_x.py", 1, PYTEST_FAIL), W("app.py", "x = 2\n", "update"), X("pytest", 0, PYTEST_OK)),
         True, "artifact execution tests"),
    Case("failure-not-resolved-by-narrower-run", "Fix the failing test",
         (X("pytest", 1, PYTEST_FAIL), W("app.py", "x = 2\n", "update"), X("pytest tests/test_y.py", 0, PYTEST_OK)),
         False, "artifact execution tests", "tests"),
    Case("only-ls", "Run the tests", (X("ls", 0, "tests"),), False, "execution tests", "execution tests"),
    Case("nothing-run", "Run the tests", (), False, "execution tests", "execution tests"),
    Case("zh-run-tests", "运行测试", (X("python -m pytest", 0, PYTEST_OK),), True, "execution tests"),
    Case("zh-failed-then-module-run", "运行测试", (X("pytest", 1, PYTEST_FAIL), X("python -m pytest -q", 0, PYTEST_OK)),
         True, "execution tests"),
    Case("masked-test-failure", "Run the tests", (X("pytest || true", 0, PYTEST_FAIL),), False, "execution tests",
         "execution", answer="Ran the tests."),
    Case("echoed-summary", "Run the tests", (X("echo '3 passed in 0.01s'", 0, "3 passed in 0.01s"),), False,
         "execution tests claims", "execution tests claims", answer="3 passed."),
    Case("timed-out-run", "Run main.py", (X("python main.py", None, "", timed_out=True),), False, "execution",
         "execution", says=("`python main.py`", "failed")),
    Case("other-file-does-not-resolve", "Run a.py and b.py", (X("python a.py", 1), X("python b.py", 0)), False,
         "execution", "execution"),
    Case("grep-miss-is-not-a-failure", "Run the tests", (X("grep -r TODO src", 1), X("pytest", 0, PYTEST_OK)), True,
         "execution tests"),
    Case("failed-install-then-tests-pass", "Run the tests",
         (X("pip install nosuchpkg", 1), X("pytest", 0, PYTEST_OK)), True, "execution tests"),
    Case("sub-agent-runs-tests", "Run the tests", (X("pytest", 0, PYTEST_OK, depth=1),), True, "execution tests"),
    Case("background-server-running", "Start the dev server in the background",
         (P("start", "npm run dev", "running"), P("poll", "npm run dev", "running")), True, "execution"),
    Case("background-process-crashed", "Start the dev server in the background",
         (P("start", "npm run dev", "running"), P("poll", "npm run dev", "exited", 1)), False, "execution",
         "execution"),
    Case("background-crash-then-restart", "Start the dev server in the background",
         (P("start", "npm run dev", "running"), P("poll", "npm run dev", "exited", 1),
          P("start", "npm run dev", "running", pid="p2"), P("poll", "npm run dev", "running", pid="p2")), True,
         "execution"),
    # --- report: a separate file, after the work ran ---------------------------------------------
    Case("report-after-tests", "Run the tests and write a report to report.md",
         (X("pytest", 0, PYTEST_OK), W("report.md", "All 3 tests passed.\n"), R("report.md")), True,
         "artifact execution tests report"),
    Case("report-before-execution", "Run the tests and write a report to report.md",
         (W("report.md", "All tests passed.\n"), R("report.md"), X("pytest", 0, PYTEST_OK)), False,
         "artifact execution tests report", "report", says=("written before any",)),
    Case("zh-run-and-report", "运行测试并生成报告", (X("pytest", 0, PYTEST_OK), W("report.md", "通过\n")), True,
         "artifact execution tests report"),
    Case("report-after-probe-only", "Generate a report of the test results",
         (X("cat results.txt", 0, "ok"), W("report.md", "ok\n")), False, "artifact report", "report"),
    Case("report-only-in-chat", "Run the tests and write a report", (X("pytest", 0, PYTEST_OK),), False,
         "artifact execution tests report", "artifact report", answer="Report: all good."),
    # --- benchmark: figures copied from output ---------------------------------------------------
    Case("bench-report-copied", "Benchmark bubble sort vs quicksort and write a report",
         (W("bench.py"), X("python bench.py", 0, BENCH_OUT),
          W("report.md", "| algo | time |\n|---|---|\n| bubble | 1.234 s |\n| quick | 0.056 s |\n")), True,
         "artifact execution report benchmark"),
    Case("bench-report-invented-number", "Benchmark bubble sort vs quicksort and write a report",
         (W("bench.py"), X("python bench.py", 0, BENCH_OUT), W("report.md", "bubble 1.234 s, quick 0.050 s\n")),
         False, "artifact execution report benchmark", "benchmark", says=("0.050",)),
    Case("bench-report-numbering-and-years", "Benchmark bubble sort vs quicksort and write a report",
         (X("python bench.py", 0, BENCH_OUT),
          W("report.md", "# Report (2024)\n1. Setup: Python 3.11, 8 runs\n2. Results: bubble 1.234 s\n")), True,
         "artifact execution report benchmark"),
    Case("bench-output-from-failed-run", "Benchmark bubble sort vs quicksort and write a report",
         (X("python bench.py", 1, BENCH_OUT), W("report.md", "bubble 1.234 s\n")), False,
         "artifact execution report benchmark", "execution benchmark"),
    Case("bench-number-printed-after-report", "Benchmark bubble sort vs quicksort and write a report",
         (X("python bench.py", 0, "bubble: 1.0 s"), W("report.md", "bubble 2.5 s\n"),
          X("python bench.py", 0, "bubble: 2.5 s")), False, "artifact execution report benchmark", "benchmark"),
    Case("bench-report-without-figures", "Benchmark bubble sort vs quicksort and write a report",
         (X("python bench.py", 0, BENCH_OUT), W("report.md", "Quicksort is faster.\n")), False,
         "artifact execution report benchmark", "benchmark", says=("contains no measured figures",)),
    Case("timing-in-answer", "How fast is sort.py? Time it.", (X("python sort.py", 0, "took 0.42 s"),), True,
         "execution benchmark", answer="It took 0.42 s."),
    Case("timing-answer-rounded", "How fast is sort.py? Time it.", (X("python sort.py", 0, "took 0.42 s"),), False,
         "execution benchmark", "benchmark", answer="It takes about 0.4 s."),
    Case("zh-bench-report", "比较两个排序算法的性能并生成报告",
         (X("python bench.py", 0, ZH_BENCH_OUT), W("report.md", "快速排序 0.012 秒，冒泡排序 1.5 秒\n")), True,
         "artifact execution report benchmark"),
    Case("zh-bench-invented", "比较两个排序算法的性能并生成报告",
         (X("python bench.py", 0, ZH_BENCH_OUT), W("report.md", "快速排序 0.01 秒，快 150 倍\n")), False,
         "artifact execution report benchmark", "benchmark"),
    Case("bench-report-by-sub-agent", "Benchmark bubble sort vs quicksort and write a report",
         (X("python bench.py", 0, BENCH_OUT), W("report.md", "bubble 1.234 s\n", depth=1)), True,
         "artifact execution report benchmark"),
    # --- inspection: questions about the code need a look ----------------------------------------
    Case("zh-question-read", "这个函数是做什么的？", (R("utils.py"),), True, "inspection"),
    Case("zh-question-unread", "这个函数是做什么的？", (), False, "inspection", "inspection"),
    Case("question-searched", "What does parse_args() do?", (L("search_files"),), True, "inspection"),
    Case("question-answered-without-reading", "What does parse_args() do?", (), False, "inspection", "inspection",
         answer="It parses arguments.", says=("nothing in the workspace was read",)),
    Case("question-failed-read-only", "What does parse_args() do?", (R("cli.py", ok=False),), False, "inspection",
         "inspection"),
    Case("explain-by-sub-agent", "Explain the error handling in server.py", (R("server.py", depth=1),), True,
         "inspection"),
    Case("review-without-reading", "Review utils.py", (), False, "inspection", "inspection"),
    Case("git-diff-question", "Show me the git diff", (G("diff", []),), True, "inspection"),
    Case("whole-tree-git-facts-without-paths", "Create hello.py that prints hello", (W("hello.py", PY), G("diff")),
         True, "artifact source"),
    Case("git-question-no-tools", "What changed on this branch?", (), False, "inspection", "inspection"),
    Case("list-files-listed", "list files", (L("list_files"),), True, "inspection"),
    Case("content-question-listed-only", "What does README.md say about installing?", (L("list_files"),), False,
         "inspection", "inspection", says=("README.md was never read",)),
    Case("list-files-from-thin-air", "list files", (), False, "inspection", "inspection",
         answer="There are app.py and README.md."),
    Case("read-named-file-unread", "read hello.py and tell what it prints", (), False, "inspection", "inspection",
         answer="It prints hello."),
    Case("zh-list-files-listed", "列出所有文件", (L("list_files"),), True, "inspection"),
    Case("zh-greeting", "你好", (), True, ""),
    Case("greeting", "Hello!", (), True, ""),
    Case("general-question", "What is 2+2?", (), True, "", answer="4"),
    Case("memory-chore", "Remember that I prefer tabs", (), True, ""),
    Case("general-comparison-question", "What's the difference between a list and a tuple in Python?", (), True, "",
         answer="A list is mutable; a tuple is not."),
    Case("general-explanation", "Explain how the Node.js event loop works", (), True, "", answer="It runs tasks."),
    Case("analyze-the-logs-unread", "Analyze the logs and tell me why it crashed", (), False, "inspection",
         "inspection"),
    # --- mixed ----------------------------------------------------------------------------------
    Case("create-and-run", "Create hello.py and run it", (W("hello.py", PY), X("python hello.py", 0, "hello")), True,
         "artifact source execution"),
    Case("create-and-run-fails", "Create hello.py and run it", (W("hello.py", PY), X("python hello.py", 1)), False,
         "artifact source execution", "artifact execution"),
    Case("zh-fix-and-test", "修复 utils.py 中的 bug 并运行测试",
         (R("utils.py"), W("utils.py", "x = 2\n", "update"), X("pytest", 0, PYTEST_OK)), True,
         "artifact execution tests"),
    Case("zh-fix-tests-still-fail", "修复 utils.py 中的 bug 并运行测试",
         (R("utils.py"), W("utils.py", "x = 2\n", "update"), X("pytest", 1, PYTEST_FAIL)), False,
         "artifact execution tests", "artifact execution tests"),
    Case("zh-fix-other-file", "修一下 calc.py 的 bug", (R("calc.py"), W("calc_fixed.py"), R("calc_fixed.py")), False,
         "artifact", "artifact", says=("calc.py was never changed",)),
    Case("fix-without-writing", "Fix the bug in utils.py", (R("utils.py"),), False, "artifact", "artifact",
         says=("utils.py was never changed",)),
)


def run_case(case: Case) -> Verdict:
    """Build the case's event stream, feed a ledger through the bus, and ask the gate."""
    log = Log(case.task)
    ledger = EvidenceLedger()
    log.bus.add_sink(ledger.record)
    for step in case.steps:
        step(log)
    gate = CompletionGate(derive_requirements(case.task))
    return gate.check(ledger, case.answer)


def confusion_matrix() -> dict[str, int]:
    """Counts over the whole table: verdicts that match, false completed and false unverified."""
    counts = {"cases": 0, "expected_completed": 0, "expected_unverified": 0, "false_completed": 0,
              "false_unverified": 0, "wrong_missing_kinds": 0}
    for case in CASES:
        verdict = run_case(case)
        counts["cases"] += 1
        counts["expected_completed" if case.complete else "expected_unverified"] += 1
        if verdict.complete and not case.complete:
            counts["false_completed"] += 1
        if case.complete and not verdict.complete:
            counts["false_unverified"] += 1
        if verdict.missing_kinds != case.missing.split():
            counts["wrong_missing_kinds"] += 1
    return counts


@pytest.mark.parametrize("case", CASES, ids=[c.id for c in CASES])
def test_case(case: Case) -> None:
    verdict = run_case(case)
    assert verdict.required == case.required.split(), verdict
    assert verdict.missing_kinds == case.missing.split(), verdict.missing
    assert verdict.complete is case.complete
    assert bool(verdict.instruction) is not case.complete
    for fragment in case.says:
        assert any(fragment in line for line in verdict.missing), verdict.missing


@pytest.mark.parametrize("case", CASES, ids=[c.id for c in CASES])
def test_replay_agrees_with_live_verdict(case: Case) -> None:
    log = Log(case.task)
    for step in case.steps:
        step(log)
    log.answer(case.answer)
    replayed = recheck(list(log.bus.history))
    assert (replayed.complete, replayed.missing) == (run_case(case).complete, run_case(case).missing)


def test_table_is_large_and_balanced() -> None:
    counts = confusion_matrix()
    assert counts["cases"] >= 60
    assert counts["expected_completed"] >= 25 and counts["expected_unverified"] >= 25


def test_confusion_matrix_has_no_errors() -> None:
    counts = confusion_matrix()
    assert (counts["false_completed"], counts["false_unverified"], counts["wrong_missing_kinds"]) == (0, 0, 0)
