"""Argument normalization and doubly-escaped newline decoding, before any policy check."""

from __future__ import annotations

from typing import Any, Literal

import pytest
from pydantic import BaseModel, ConfigDict, ValidationError

from k1412_ls.core.guards import (
    decode_edit_pair,
    decode_patch_text,
    decode_source_text,
    normalize_arguments,
    normalize_path,
)
from k1412_ls.tools.registry import Tool, ToolResult

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
