"""Python syntax guard, retry guards over sequences of calls, and the hard limits."""

from __future__ import annotations

import threading
from typing import Any

import pytest

from k1412_ls.core.guards import (
    GuardState,
    diagnostic_signature,
    is_inspection,
)
from k1412_ls.limits import Limits
from k1412_ls.tools.facts import exec_facts, write_entry, write_facts
from k1412_ls.tools.registry import ToolResult
from tests.support.guard_asserts import assert_refusal

# ---------------------------------------------------------------------------
# Python writes that do not parse

@pytest.mark.parametrize("path, content, fragments", [
    ("hello.py", "import os\n\nprint(\n", ("hello.py does not parse:", "at line 3", "(`print(`)")),
    ("pkg/mod.py", "def f(:\n    pass\n", ("pkg/mod.py does not parse:", "at line 1")),
    ("a.py", "if True\n    x = 1\n", ("expected ':'", "at line 1")),
    ("a.py", "def f():\nreturn 1\n", ("expected an indented block", "at line 2")),
    ("a.pyi", "def f() -> :\n", ("a.pyi does not parse",)),
    ("a.py", "x = [1, 2\n", ("was never closed",)),
    ("a.py", "print 'hello'\n", ("a.py does not parse", "at line 1")),
    ("a.py", "x = 1\x00\n", ("NUL byte",)),
])
def test_python_that_does_not_parse_is_refused(path: str, content: str, fragments: tuple[str, ...]) -> None:
    result = GuardState().precheck("write_file", {"path": path, "content": content})
    error = assert_refusal(result, *fragments)
    assert error.endswith("fix the code and write it again.") or "NUL" in error


@pytest.mark.parametrize("path, content", [
    ("ok.py", "import os\nprint(os.getcwd())\n"),
    ("ok.py", ""),
    ("ok.py", "match x:\n    case 1:\n        pass\n"),
    ("notes.md", "print(\n"),
    ("script.sh", "if then fi ((\n"),
    ("template.py", "name = {{ cookiecutter.name }}\n"),
    ("ok.pyi", "def f() -> int: ...\n"),
    ("data.json", "{broken"),
])
def test_valid_python_and_other_files_are_not_checked(path: str, content: str) -> None:
    assert GuardState().precheck("write_file", {"path": path, "content": content}) is None


def test_apply_patch_adding_broken_python_is_refused() -> None:
    patch = "*** Begin Patch\n*** Add File: app.py\n+def f(:\n+    pass\n*** End Patch\n"
    assert_refusal(GuardState().precheck("apply_patch", {"patch": patch}), "app.py does not parse", "at line 1")
    good = "*** Begin Patch\n*** Add File: app.py\n+def f():\n+    pass\n*** End Patch\n"
    assert GuardState().precheck("apply_patch", {"patch": good}) is None



# ---------------------------------------------------------------------------
# Retry guards: sequences

def _write_ok(path: str, content: str) -> ToolResult:
    return ToolResult.success(facts=write_facts([write_entry(path, content, "update")]), path=path)


def _command_result(command: str, exit_code: int | None, output: str, *, timed_out: bool = False,
                    cancelled: bool = False) -> ToolResult:
    facts = exec_facts(command, ".", exit_code, output, timed_out=timed_out, cancelled=cancelled)
    fields = {"exit_code": exit_code, "output": output, "duration_ms": 12}
    if exit_code == 0:
        return ToolResult.success(facts=facts, **fields)
    return ToolResult.failure(f"The command exited with code {exit_code}; read the output and fix the cause.",
                              facts=facts, **fields)


def _run(state: GuardState, command: str, result: ToolResult, **extra: Any) -> ToolResult | None:
    arguments = {"command": command, **extra}
    early = state.precheck("run_command", arguments)
    if early is None:
        state.observe("run_command", arguments, result)
    return early


def test_identical_successful_write_is_skipped_as_unchanged() -> None:
    state = GuardState()
    args = {"path": "src/app.py", "content": "x = 1\n"}
    assert state.precheck("write_file", args) is None
    state.observe("write_file", args, _write_ok("src/app.py", "x = 1\n"))
    skip = state.precheck("write_file", dict(args))
    assert skip is not None and skip.ok and skip.data["unchanged"] is True
    assert skip.facts["kind"] == "write" and skip.facts["unchanged"] is True
    assert skip.facts["writes"][0]["path"] == "src/app.py"
    assert skip.facts["writes"][0]["sha256"] == write_entry("p", "x = 1\n", "update")["sha256"]
    # A write elsewhere changes nothing about this file.
    state.observe("write_file", {"path": "other.py", "content": "y = 2\n"}, _write_ok("other.py", "y = 2\n"))
    assert state.precheck("write_file", args) is not None
    # New content runs; then the old content is a real change again.
    assert state.precheck("write_file", {"path": "src/app.py", "content": "x = 2\n"}) is None
    state.observe("write_file", {"path": "src/app.py", "content": "x = 2\n"}, _write_ok("src/app.py", "x = 2\n"))
    assert state.precheck("write_file", args) is None


def test_identical_write_runs_again_after_a_patch_touched_the_file() -> None:
    state = GuardState()
    args = {"path": "./src//app.py", "content": "x = 1\n"}
    state.observe("write_file", args, _write_ok("src/app.py", "x = 1\n"))
    assert state.precheck("write_file", {"path": "src/app.py", "content": "x = 1\n"}) is not None
    patch = {"path": "src/app.py", "edits": [{"old_text": "1", "new_text": "3"}]}
    state.observe("patch_file", patch, _write_ok("src/app.py", "x = 3\n"))
    assert state.precheck("write_file", args) is None


def test_absolute_path_inside_the_workspace_matches_the_relative_one() -> None:
    state = GuardState(workspace_root="/ws/proj")
    state.observe("write_file", {"path": "/ws/proj/a.py", "content": "a = 1\n"}, _write_ok("a.py", "a = 1\n"))
    skip = state.precheck("write_file", {"path": "a.py", "content": "a = 1\n"})
    assert skip is not None and skip.data["unchanged"] is True and skip.data["path"] == "a.py"


def test_identical_failed_write_is_blocked_until_content_or_target_changes() -> None:
    state = GuardState()
    args = {"path": "src/app.py", "edits": [{"old_text": "missing", "new_text": "x"}]}
    assert state.precheck("patch_file", args) is None
    state.observe("patch_file", args, ToolResult.failure("old_text was not found in src/app.py; read the file."))
    error = assert_refusal(state.precheck("patch_file", dict(args)), "This exact write already failed:",
                           "old_text was not found in src/app.py; read the file;",
                           "change the content or fix the cause first.")
    assert state.precheck("patch_file", dict(args)).facts["guard"] == "repeat_write"  # type: ignore[union-attr]
    assert error.count(". ") == 0
    changed = {"path": "src/app.py", "edits": [{"old_text": "present", "new_text": "x"}]}
    assert state.precheck("patch_file", changed) is None
    # Reading the target again is a new situation (conflicts ask for exactly that).
    state.observe("read_file", {"path": "src/app.py"}, ToolResult.success(facts={"kind": "read", "paths": ["src/app.py"]}))
    assert state.precheck("patch_file", args) is None


def test_failed_write_unblocks_when_another_write_touched_its_target() -> None:
    state = GuardState()
    args = {"path": "b.py", "content": "b = 1\n"}
    state.observe("write_file", args, ToolResult.failure("b.py changed since you last read it; read it again."))
    assert_refusal(state.precheck("write_file", args), "already failed")
    state.observe("write_file", {"path": "c.py", "content": "c\n"}, _write_ok("c.py", "c\n"))
    assert_refusal(state.precheck("write_file", args), "already failed")   # elsewhere: still blocked
    state.observe("apply_patch", {"patch": "*** Begin Patch\n*** Update File: b.py\n@@\n-b\n+c\n*** End Patch"},
                  _write_ok("b.py", "c\n"))
    assert state.precheck("write_file", args) is None


def test_failed_command_is_blocked_until_a_write() -> None:
    state = GuardState()
    assert _run(state, "pytest -q", _command_result("pytest -q", 1, "E   assert 1 == 2\n1 failed in 0.12s")) is None
    error = assert_refusal(_run(state, "pytest  -q", _command_result("pytest -q", 0, "")),
                           "This command already failed unchanged (exit 1: 1 failed in 0.12s)")
    assert error.endswith("change the code or the command before running it again.")
    # Reading does not change anything the command depends on.
    state.observe("read_file", {"path": "test_x.py"}, ToolResult.success(facts={"kind": "read", "paths": ["test_x.py"]}))
    assert_refusal(_run(state, "pytest -q", _command_result("pytest -q", 0, "")), "already failed unchanged")
    # A different cwd is a different command.
    assert state.precheck("run_command", {"command": "pytest -q", "cwd": "sub"}) is None
    state.observe("write_file", {"path": "x.py", "content": "x = 2\n"}, _write_ok("x.py", "x = 2\n"))
    assert _run(state, "pytest -q", _command_result("pytest -q", 0, "1 passed")) is None
    # Success clears the record for good.
    assert state.precheck("run_command", {"command": "pytest -q"}) is None


@pytest.mark.parametrize("between, unblocks", [
    (("pip install requests", 0, "Successfully installed requests-2.32.3"), True),
    (("mkdir -p build", 0, ""), True),
    (("python3 -c 'import requests'", 1, "ModuleNotFoundError: No module named 'requests'"), False),
    (("python3 app.py --check", 1, "ModuleNotFoundError: No module named 'requests'"), False),
    (("python3 other.py", 1, "FileNotFoundError: config.toml"), True),
    (("python3 app.py", 0, "ok"), False),   # blocked itself: never ran, so it cannot unblock
    (("ls -la", 0, "total 8"), False),      # looking changes nothing
    (("cat app.py", 0, "import requests"), False),
    (("git status", 0, "nothing to commit"), False),
    (("echo 'requests' > requirements.txt", 0, ""), True),
    (("git stash", 0, "Saved working directory"), True),
])
def test_failed_command_unblocks_on_a_materially_different_diagnostic(
        between: tuple[str, int, str], unblocks: bool) -> None:
    state = GuardState()
    failure = "Traceback (most recent call last):\nModuleNotFoundError: No module named 'requests'"
    _run(state, "python3 app.py", _command_result("python3 app.py", 1, failure))
    # Run-to-run noise (timestamps, durations) does not make the same diagnostic new.
    command, code, output = between
    _run(state, command, _command_result(command, code, output))
    after = state.precheck("run_command", {"command": "python3 app.py"})
    assert (after is None) is unblocks


def test_background_process_news_unblocks_a_failed_command() -> None:
    state = GuardState()
    _run(state, "curl -sf 127.0.0.1:8000", _command_result("curl", 7, "curl: (7) Failed to connect"))
    silent = ToolResult.success(facts={"kind": "process", "op": "poll", "process_id": "p1", "status": "running",
                                       "exit_code": None, "output": "", "numbers": []}, status="running")
    state.observe("process_poll", {"process_id": "p1"}, silent)
    assert_refusal(state.precheck("run_command", {"command": "curl -sf 127.0.0.1:8000"}), "already failed")
    news = ToolResult.success(facts={"kind": "process", "op": "poll", "process_id": "p1", "status": "running",
                                     "exit_code": None, "output": "Serving HTTP on 0.0.0.0 port 8000",
                                     "numbers": ["0.0.0.0", "8000"]}, status="running")
    state.observe("process_poll", {"process_id": "p1"}, news)
    assert state.precheck("run_command", {"command": "curl -sf 127.0.0.1:8000"}) is None


@pytest.mark.parametrize("command, inspection", [
    ("ls -la", True),
    ("cat a.py | grep def | wc -l", True),
    ("git status && git diff", True),
    ("find . -name '*.py'", True),
    ("grep -r x . 2>/dev/null", True),
    ("sed -n 1,5p a.py", True),
    ("cd src && ls", True),
    ("sed -i s/a/b/ a.py", False),
    ("find . -name '*.pyc' -delete", False),
    ("echo x > out.txt", False),
    ("cat a b >> c", False),
    ("git checkout main", False),
    ("pip install requests", False),
    ("make", False),
    ("python3 'unbalanced", False),
])
def test_inspection_commands(command: str, inspection: bool) -> None:
    assert is_inspection(command) is inspection


@pytest.mark.parametrize("first, second, same", [
    ("done at 2026-11-29T17:00:00.123Z", "done at 2026-11-30T09:12:44.001Z", True),
    ("1 failed in 0.12s", "1 failed in 3.40s", True),
    ("object at 0x7f3a2b", "object at 0x55ee01", True),
    ("wrote /tmp/pytest-of-u/pytest-12/x", "wrote /tmp/pytest-of-u/pytest-13/x", True),
    ("commit 3f2a9bc1d", "commit 77aa01b2c", True),
    ("2 failed, 3 passed", "1 failed, 4 passed", False),
    ("error at line 3", "error at line 7", False),
    ("NameError: name 'x'", "TypeError: bad operand", False),
])
def test_diagnostic_masking(first: str, second: str, same: bool) -> None:
    assert (diagnostic_signature(first) == diagnostic_signature(second)) is same


def test_timed_out_command_may_run_with_a_longer_timeout() -> None:
    state = GuardState()
    _run(state, "make all", _command_result("make all", None, "building...", timed_out=True), timeout_s=60)
    error = assert_refusal(state.precheck("run_command", {"command": "make all", "timeout_s": 60}),
                           "(timed out: building")
    assert "change the code or the command" in error
    assert_refusal(state.precheck("run_command", {"command": "make all", "timeout_s": 30}), "timed out")
    assert state.precheck("run_command", {"command": "make all", "timeout_s": 600}) is None


def test_silent_failure_is_named_as_such() -> None:
    state = GuardState()
    _run(state, "false", _command_result("false", 1, ""))
    assert_refusal(state.precheck("run_command", {"command": "false"}), "(exit 1, no output)")


def test_cancelled_command_is_not_a_failure() -> None:
    state = GuardState()
    _run(state, "sleep 100", _command_result("sleep 100", None, "", cancelled=True))
    assert state.precheck("run_command", {"command": "sleep 100"}) is None


def test_command_that_could_not_start_names_the_tool_error() -> None:
    state = GuardState()
    _run(state, "ls", ToolResult.failure("The cwd 'nope' does not exist; use a directory inside the workspace."),
         cwd="nope")
    assert_refusal(state.precheck("run_command", {"command": "ls", "cwd": "nope"}),
                   "(error: The cwd 'nope' does not exist")


def test_guard_refusals_observed_by_mistake_teach_nothing() -> None:
    state = GuardState()
    refusal = state.precheck("run_command", {"command": "python3"})
    assert refusal is not None
    state.observe("run_command", {"command": "python3"}, refusal)
    state.observe("write_file", {"path": "a.py", "content": "x"}, ToolResult.failure(
        "nope", facts={"kind": "guard", "guard": "syntax"}))
    assert state.precheck("write_file", {"path": "a.py", "content": "x"}) is None


def test_shared_state_is_safe_across_threads() -> None:
    state = GuardState()

    def worker(n: int) -> None:
        for i in range(200):
            args = {"path": f"f{n}.py", "content": f"x = {i}\n"}
            if state.precheck("write_file", args) is None:
                state.observe("write_file", args, _write_ok(f"f{n}.py", args["content"]))
            _run(state, f"cmd{n}", _command_result(f"cmd{n}", 1, f"fail {i}"))

    threads = [threading.Thread(target=worker, args=(n,)) for n in range(4)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=30)
    for n in range(4):
        skip = state.precheck("write_file", {"path": f"f{n}.py", "content": "x = 199\n"})
        assert skip is not None and skip.data["unchanged"] is True


# ---------------------------------------------------------------------------
# Limits

@pytest.mark.parametrize("method, args, kwargs, expected", [
    ("output_tokens", (4096,), {}, 4096),
    ("output_tokens", (10**9,), {}, 131_072),
    ("output_tokens", (0,), {}, 1),
    ("iterations", (30,), {}, 30),
    ("iterations", (30,), {"depth": 1}, 8),
    ("iterations", (5,), {"depth": 2}, 5),
    ("iterations", (10**6,), {}, 1000),
])
def test_limits(method: str, args: tuple[Any, ...], kwargs: dict[str, Any], expected: Any) -> None:
    assert getattr(Limits(), method)(*args, **kwargs) == expected
