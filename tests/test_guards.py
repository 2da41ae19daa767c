"""Defensive normalization and retry guards (SPEC §8), one table per guard plus sequences."""

from __future__ import annotations

import re
import threading
from typing import Any, Literal

import pytest
from pydantic import BaseModel, ConfigDict, ValidationError

from k1412_ls.core.guards import (
    Caps,
    GuardState,
    check_command,
    decode_edit_pair,
    decode_patch_text,
    decode_source_text,
    diagnostic_signature,
    find_duplicate_commands,
    is_inspection,
    normalize_arguments,
    normalize_path,
)
from k1412_ls.core.model_port import ToolCall
from k1412_ls.tools.facts import exec_facts, write_entry, write_facts
from k1412_ls.tools.registry import Tool, ToolResult


def assert_refusal(result: ToolResult | None, *fragments: str) -> str:
    """A refusal is ok false with one sentence (no line break) that says what to do next."""
    assert result is not None, "expected a refusal"
    assert result.ok is False
    error = result.data["error"]
    assert "\n" not in error
    assert error.endswith(".")
    assert not re.search(r"[.!?] [A-Z]", error), f"more than one sentence: {error}"
    for fragment in fragments:
        assert fragment in error
    return error


# ---------------------------------------------------------------------------
# Interactive commands

@pytest.mark.parametrize("command, refused_as", [
    ("python3", "python3 with no arguments starts an interactive session"),
    ("python", "python with no arguments"),
    ("python3.11", "python3.11 with no arguments"),
    ("/usr/bin/python3", "python3 with no arguments"),
    ("env python3", "python3 with no arguments"),
    ("/usr/bin/env -i FOO=1 python3", "python3 with no arguments"),
    ("exec python3", "python3 with no arguments"),
    ("sudo -u root python3", "python3 with no arguments"),
    ("FOO=1 python3", "python3 with no arguments"),
    ("timeout 10 python3", "python3 with no arguments"),
    ("python3 2>/dev/null", "python3 with no arguments"),
    ("cd src && python3", "python3 with no arguments"),
    ("uv run python", "python with no arguments"),
    ("ipython", "ipython with no arguments"),
    ("python3 -i", "python3 -i starts an interactive session"),
    ("python3 -i app.py", "python3 -i starts an interactive session"),
    ("python3 -u", "python3 -u starts an interactive session"),
    ("bash", "bash with no arguments"),
    ("sh", "sh with no arguments"),
    ("zsh", "zsh with no arguments"),
    ("bash -l", "bash -l starts an interactive session"),
    ("node", "node with no arguments"),
    ("node --interactive", "node --interactive starts"),
    ("irb", "irb with no arguments"),
    ("irb app.rb", "irb app.rb starts an interactive session"),
    ("ruby", "ruby with no arguments"),
    ("psql", "psql with no arguments"),
    ("psql mydb", "psql mydb starts an interactive session"),
    ("sqlite3", "sqlite3 with no arguments"),
    ("sqlite3 app.db", "sqlite3 app.db starts an interactive session"),
    ("R", "R with no arguments"),
    ("ghci", "ghci with no arguments"),
    ("vim notes.py", "vim is an interactive full-screen program"),
    ("nano", "nano is an interactive full-screen program"),
    ("top", "top is an interactive full-screen program"),
    ("less", "less with no arguments"),
    ("bash -c 'python3'", "python3 with no arguments"),
    ("bash -lc 'cd src && node'", "node with no arguments"),
])
def test_interactive_commands_are_refused(command: str, refused_as: str) -> None:
    result = GuardState().precheck("run_command", {"command": command})
    error = assert_refusal(result, refused_as)
    assert "cannot work here" in error
    assert result is not None and result.facts == {"kind": "guard", "guard": "command"}


@pytest.mark.parametrize("command", [
    "echo 'print(1)' | python3",
    "python3 < input.py",
    "python3 <<< 'print(1)'",
    "python3 script.py",
    "python3 script.py -i",
    "python3 -m pytest -q",
    "python3 -c 'print(1)'",
    "python3 -uc 'print(1)'",
    "python3 -Wignore script.py",
    "python3 --version",
    "python3 -V",
    "/usr/bin/env python3 tool.py",
    "bash -c 'ls -la'",
    "bash -ec 'make test'",
    "bash build.sh",
    "echo ls | bash -s",
    "node -e 'console.log(1)'",
    "node -v",
    "node server.js",
    "ruby -e 'puts 1'",
    "psql -c 'select 1'",
    "sqlite3 app.db 'select 1'",
    "sqlite3 app.db < schema.sql",
    "top -b -n 1",
    "git log | less",
    "less README.md",
    "cat README.md",
    "ls -la && echo done",
    "Rscript analysis.R",
    "python3 'unbalanced",
    "cat <<EOF\npython3\nEOF",
    "echo 'print(1)' | bash -c 'python3'",
    "bash -c 'python3 -m pytest'",
])
def test_non_interactive_commands_may_run(command: str) -> None:
    assert check_command(command) is None
    assert GuardState().precheck("run_command", {"command": command}) is None


def test_background_processes_get_the_same_command_guard() -> None:
    assert_refusal(GuardState().precheck("process_start", {"command": "node"}), "node with no arguments")
    assert GuardState().precheck("process_start", {"command": "python3 -m http.server 8000"}) is None


# ---------------------------------------------------------------------------
# Documents and data files run as programs

@pytest.mark.parametrize("command, refused_as", [
    ("./README.md", "./README.md is a document or data file, not a program"),
    ("docs/guide.rst", "docs/guide.rst is a document or data file"),
    ("./data.json", "./data.json is a document or data file"),
    ("python3 data.csv", "python3 cannot run data.csv: it is a document or data file, not a Python program"),
    ("python3 -u results.json", "python3 cannot run results.json"),
    ("bash notes.txt", "bash cannot run notes.txt"),
    ("sh image.png", "sh cannot run image.png"),
    ("node config.json", "node cannot run config.json: it is a document or data file, not a JavaScript program"),
    ("ruby Gemfile.lock", "ruby cannot run Gemfile.lock"),
    ("source README.md", "source cannot run README.md"),
    ("make && python3 report.md", "python3 cannot run report.md"),
])
def test_documents_run_as_programs_are_refused(command: str, refused_as: str) -> None:
    error = assert_refusal(GuardState().precheck("run_command", {"command": command}), refused_as)
    assert "read_file" in error


@pytest.mark.parametrize("command", [
    "cat README.md",
    "head -n 5 data.csv",
    "python3 load.py data.csv",
    "python3 -m json.tool config.json",
    "python3 -c 'import json; json.load(open(\"a.json\"))'",
    "node build.js config.json",
    "bash run.sh notes.txt",
    "./run.sh",
    ". .env",
    "source .venv/bin/activate",
    "jq . config.json",
])
def test_programs_reading_documents_may_run(command: str) -> None:
    assert check_command(command) is None


# ---------------------------------------------------------------------------
# Argument normalization

class _Edit(BaseModel):
    model_config = ConfigDict(extra="forbid")
    old_text: str
    new_text: str
    replace_all: bool = False


class _Args(BaseModel):
    model_config = ConfigDict(extra="forbid")
    path: str = "."
    depth: int = 2
    start_line: int | None = None
    regex: bool = False
    glob: str | None = None
    query: str = ""
    ratio: float = 1.0
    status: Literal["pending", "in_progress", "completed"] = "pending"
    edits: list[_Edit] | None = None
    tags: list[str] = []


SCHEMA = Tool("probe", "", _Args, lambda a, c: ToolResult.success()).schema()["function"]["parameters"]


@pytest.mark.parametrize("given, expected, valid", [
    ({"depth": "5"}, {"depth": 5}, True),
    ({"depth": " -3 "}, {"depth": -3}, True),
    ({"depth": 4.0}, {"depth": 4}, True),
    ({"depth": "five"}, {"depth": "five"}, False),          # not a number: validation will say so
    ({"depth": 4.5}, {"depth": 4.5}, False),                # not integral: no guess
    ({"start_line": "12"}, {"start_line": 12}, True),
    ({"start_line": None}, {"start_line": None}, True),    # nullable: kept
    ({"regex": "true"}, {"regex": True}, True),
    ({"regex": "FALSE"}, {"regex": False}, True),
    ({"regex": "yes"}, {"regex": "yes"}, False),            # not unambiguous
    ({"query": 42}, {"query": "42"}, True),
    ({"query": 2.5}, {"query": "2.5"}, True),
    ({"query": True}, {"query": True}, False),              # "true" or "True"? no guess
    ({"ratio": "0.25"}, {"ratio": 0.25}, True),
    ({"ratio": "nan"}, {"ratio": "nan"}, False),
    ({"status": "Completed"}, {"status": "completed"}, True),
    ({"status": "done"}, {"status": "done"}, False),
    ({"path": None}, {}, True),                            # optional, not nullable: default applies
    ({"tags": "a"}, {"tags": "a"}, False),                  # a single string is not turned into a list
    ({"tags": '["a", "b"]'}, {"tags": ["a", "b"]}, True),
    ({"edits": '[{"old_text": "a", "new_text": "b", "replace_all": "true"}]'},
     {"edits": [{"old_text": "a", "new_text": "b", "replace_all": True}]}, True),
    ({"edits": [{"old_text": 1, "new_text": "b"}]}, {"edits": [{"old_text": "1", "new_text": "b"}]}, True),
    ({"unknown": "5"}, {"unknown": "5"}, False),
])
def test_arguments_are_coerced_only_when_unambiguous(given: dict[str, Any], expected: dict[str, Any],
                                                     valid: bool) -> None:
    original = dict(given)
    normalized = normalize_arguments("probe", given, SCHEMA)
    assert normalized == expected
    assert given == original  # a new dict; the input is untouched
    try:
        _Args.model_validate(normalized, strict=True)
    except ValidationError:
        assert not valid, "an unambiguous coercion must produce valid strict arguments"
    else:
        assert valid, "an ambiguous value must be left for validation to reject"


def test_full_function_definition_is_accepted_as_schema() -> None:
    definition = Tool("probe", "", _Args, lambda a, c: ToolResult.success()).schema()
    assert normalize_arguments("probe", {"depth": "7"}, definition) == {"depth": 7}


@pytest.mark.parametrize("arguments, schema", [
    ({"depth": "5"}, {"properties": "not a dict"}),
    ({"depth": object()}, SCHEMA),
    ({"edits": [None, 3, "x"]}, SCHEMA),
    ({}, {}),
    ({"path": 12}, {}),
    ({"content": b"bytes"}, {"properties": {"content": {"type": "string"}}}),
    ({"path": "\x00"}, SCHEMA),
    ({"edits": "[not json"}, SCHEMA),
])
def test_normalization_never_raises(arguments: dict[str, Any], schema: dict[str, Any]) -> None:
    result = normalize_arguments("patch_file", arguments, schema)
    assert isinstance(result, dict)
    assert result is not arguments


@pytest.mark.parametrize("given, expected", [
    ("./a//b/", "a/b"),
    ("  src/main.py \n", "src/main.py"),
    ("./", "."),
    (".", "."),
    ("a/./b", "a/b"),
    ("a/../b", "a/../b"),                   # kept: symlinks make lexical collapse wrong
    ("/ws/proj//x.py", "/ws/proj/x.py"),
    ("file:///ws/my%20file.py", "/ws/my file.py"),
    ("file://localhost/ws/a.py", "/ws/a.py"),
    ("'src/a.py'", "src/a.py"),
    ("`src/a.py`", "src/a.py"),
    ("src\\pkg\\mod.py", "src/pkg/mod.py"),   # Windows-looking relative path
    (".\\src\\a.py", "src/a.py"),
    ("src/we\\ird.py", "src/we\\ird.py"),     # mixed separators: a POSIX name with a backslash
    ("my\\ file.py", "my\\ file.py"),         # shell-escaped space: left alone
    ("C:\\work\\a.py", "C:\\work\\a.py"),     # drive letter: not ours to guess
    ("", ""),
])
def test_paths_are_normalized_lexically(given: str, expected: str) -> None:
    assert normalize_path(given) == expected


def test_path_and_cwd_fields_are_normalized() -> None:
    schema = {"type": "object", "properties": {"command": {"type": "string"}, "cwd": {"type": "string"},
                                               "timeout_s": {"type": "integer"}}}
    out = normalize_arguments("run_command", {"command": "ls", "cwd": "./src/", "timeout_s": "60"}, schema)
    assert out == {"command": "ls", "cwd": "src", "timeout_s": 60}


# ---------------------------------------------------------------------------
# Doubly-escaped newlines

@pytest.mark.parametrize("text, path, expected", [
    (r"import os\nprint(os.getcwd())\n", "app.py", "import os\nprint(os.getcwd())\n"),
    (r"#!/usr/bin/env python3\nimport sys\nprint(sys.argv)\n", "tool.py",
     "#!/usr/bin/env python3\nimport sys\nprint(sys.argv)\n"),
    (r"def f():\n    return 1\n", "m.py", "def f():\n    return 1\n"),
    (r'print(\"hi\")\nprint(2)\n', "m.py", 'print("hi")\nprint(2)\n'),   # one whole escape layer
    (r"def f():\n\treturn 1\n", "m.py", "def f():\n\treturn 1\n"),
    (r'{\n  "a": 1\n}\n', "data.json", '{\n  "a": 1\n}\n'),
    (r'name = "x"\nversion = "1"\n', "pyproject.toml", 'name = "x"\nversion = "1"\n'),
    (r"# Title\n\nIt's done.\n", "README.md", "# Title\n\nIt's done.\n"),
    (r'echo "a"\necho "b"\n', "run.sh", 'echo "a"\necho "b"\n'),
    (r"const a = 1;\nconsole.log(a);\n", "main.js", "const a = 1;\nconsole.log(a);\n"),
    (r"all:\n\tcc main.c\n", "Makefile", "all:\n\tcc main.c\n"),
])
def test_doubly_escaped_source_is_decoded(text: str, path: str, expected: str) -> None:
    assert decode_source_text(text, path) == expected
    out = normalize_arguments("write_file", {"path": path, "content": text},
                              {"properties": {"path": {"type": "string"}, "content": {"type": "string"}}})
    assert out["content"] == expected


@pytest.mark.parametrize("text, path", [
    (r'print("a\nb")', "m.py"),                       # one sequence: a real one-line program
    (r'print("a\nb\nc")', "m.py"),                    # decoding would split the string
    (r's = """a\nb\nc"""', "m.py"),                  # valid Python, escapes inside a string
    (r'x = "a\n"; y = "b\n"', "m.py"),
    ("import os\nprint('a\\nb\\nc')\n", "m.py"),      # real newlines present: already fine
    (r'print("a\nb")\nprint(1)\n', "m.py"),           # mixed: no decoding parses, left for the syntax guard
    (r'{"a": "x\ny\nz"}', "data.json"),               # valid JSON already uses escapes
    (r'console.log("a\nb\nc")', "main.js"),           # inside quotes
    (r"echo 'a\nb\nc'", "run.sh"),
    (r"line one\nline two\n", "photo.png"),           # not a text target
    (r"line one\nline two\n", None),
    (r"a\\nb\\nc", "notes.md"),                       # escaped backslashes, not newline escapes
])
def test_ambiguous_escapes_stay_untouched(text: str, path: str | None) -> None:
    assert decode_source_text(text, path) == text


@pytest.mark.parametrize("old, new, path, expected", [
    (r"a = 1\nb = 2", r"a = 1\nb = 3", "m.py", ("a = 1\nb = 2", "a = 1\nb = 3")),
    ("x = 1", r"x = 1\ny = 2", "m.py", ("x = 1", r"x = 1\ny = 2")),          # only one sequence in total
    ("x = 1", r"x = 1\ny = 2\nz = 3", "m.py", ("x = 1", "x = 1\ny = 2\nz = 3")),
    (r'print("a\nb")', r'print("a\nc")', "m.py", (r'print("a\nb")', r'print("a\nc")')),
    ("a\nb", r"a\nc\nd", "m.py", ("a\nb", r"a\nc\nd")),                        # real newline in the pair
    (r"one\ntwo", r"one\nthree", "notes.md", ("one\ntwo", "one\nthree")),
    (r"one\ntwo", r"one\nthree", "image.png", (r"one\ntwo", r"one\nthree")),
    ("plain", "text", "m.py", ("plain", "text")),
])
def test_patch_file_edits_decode_as_a_pair(old: str, new: str, path: str, expected: tuple[str, str]) -> None:
    assert decode_edit_pair(old, new, path) == expected


@pytest.mark.parametrize("text, unified, expected", [
    (r"*** Begin Patch\n*** Add File: a.py\n+x = 1\n*** End Patch", False,
     "*** Begin Patch\n*** Add File: a.py\n+x = 1\n*** End Patch"),
    (r"--- a/x.py\n+++ b/x.py\n@@ -1 +1 @@\n-a\n+b\n", True, "--- a/x.py\n+++ b/x.py\n@@ -1 +1 @@\n-a\n+b\n"),
    (r"@@ -1 +1 @@\n-a\n+b\n", True, "@@ -1 +1 @@\n-a\n+b\n"),
    (r"not a patch\nat all\n", False, r"not a patch\nat all\n"),
    (r"not a diff\nat all\n", True, r"not a diff\nat all\n"),
    ("*** Begin Patch\n*** End Patch", False, "*** Begin Patch\n*** End Patch"),
    (r"*** Begin Patch", False, r"*** Begin Patch"),
    (r"*** Begin Patch\n*** End Patch", True, r"*** Begin Patch\n*** End Patch"),
])
def test_one_line_patches_are_decoded(text: str, unified: bool, expected: str) -> None:
    assert decode_patch_text(text, unified=unified) == expected


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
# Duplicate commands in one batch

def _call(index: int, name: str = "run_command", **arguments: Any) -> ToolCall:
    return ToolCall(id=f"c{index}", name=name, arguments=arguments)


@pytest.mark.parametrize("calls, expected", [
    ([_call(0, command="pytest -q"), _call(1, command="pytest -q")], {1: 0}),
    ([_call(0, command="pytest  -q "), _call(1, command=" pytest -q")], {1: 0}),
    ([_call(0, command="ls|wc -l"), _call(1, command="ls | wc -l")], {1: 0}),
    ([_call(0, command="pytest", cwd="."), _call(1, command="pytest")], {1: 0}),
    ([_call(0, command="pytest", cwd="./src/"), _call(1, command="pytest", cwd="src")], {1: 0}),
    ([_call(0, command="pytest", cwd="src"), _call(1, command="pytest", cwd="tests")], {}),
    ([_call(0, command="sleep 1", timeout_s=5), _call(1, command="sleep 1", timeout_s=60)], {}),
    ([_call(0, command="echo 'a  b'"), _call(1, command="echo 'a b'")], {}),
    ([_call(0, command="a"), _call(1, command="b"), _call(2, command="a"), _call(3, command="a")], {2: 0, 3: 0}),
    ([_call(0, "process_start", command="srv"), _call(1, "process_start", command="srv")], {}),
    ([_call(0, "read_file", path="a"), _call(1, "read_file", path="a")], {}),
    ([_call(0, command="make"), _call(1, "write_file", path="a", content="x"), _call(2, command="make")],
     {2: 0}),
])
def test_duplicate_commands_in_a_batch(calls: list[ToolCall], expected: dict[int, int]) -> None:
    assert find_duplicate_commands(calls) == expected


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
# Caps

@pytest.mark.parametrize("method, args, kwargs, expected", [
    ("output_tokens", (4096,), {}, 4096),
    ("output_tokens", (10**9,), {}, 131_072),
    ("output_tokens", (0,), {}, 1),
    ("iterations", (30,), {}, 30),
    ("iterations", (30,), {"depth": 1}, 8),
    ("iterations", (5,), {"depth": 2}, 5),
    ("iterations", (10**6,), {}, 1000),
    ("command_timeout", (None,), {}, 900.0),
    ("command_timeout", (60,), {}, 60.0),
    ("command_timeout", (5000,), {}, 900.0),
    ("command_timeout", (-1,), {}, 900.0),
    ("command_timeout", (True,), {}, 900.0),
    ("split_batch", (3,), {}, (3, 0)),
    ("split_batch", (11,), {}, (8, 3)),
])
def test_caps(method: str, args: tuple[Any, ...], kwargs: dict[str, Any], expected: Any) -> None:
    assert getattr(Caps(), method)(*args, **kwargs) == expected
