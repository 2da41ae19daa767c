"""patch_file: exact edits and unified diffs, all or nothing, bytes and mode of untouched lines kept."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from k1412_ls.tools.files.file_tools import TOOLS as FILE_TOOLS
from k1412_ls.tools.files.patching import TOOLS as PATCH_TOOLS
from k1412_ls.tools.registry import ToolContext, ToolRegistry

REGISTRY = ToolRegistry([*FILE_TOOLS, *PATCH_TOOLS])


def patch(ctx: ToolContext, **arguments: object) -> dict:
    return REGISTRY.execute("patch_file", dict(arguments), ctx).data


def one_sentence(error: str) -> bool:
    return "\n" not in error and error.endswith(".") and "Traceback" not in error


def test_single_edit_replaces_exactly_one_occurrence(ctx: ToolContext, ws: Path) -> None:
    (ws / "a.py").write_text("def f():\n    return 1\n")
    data = patch(ctx, path="a.py", edits=[{"old_text": "return 1", "new_text": "return 2"}])
    assert data["ok"] and data["replacements"] == 1
    assert (ws / "a.py").read_text() == "def f():\n    return 2\n"


def test_edits_apply_in_order_on_the_updated_text(ctx: ToolContext, ws: Path) -> None:
    (ws / "a.txt").write_text("alpha\nbeta\n")
    data = patch(ctx, path="a.txt", edits=[
        {"old_text": "alpha", "new_text": "gamma"},
        {"old_text": "gamma\nbeta", "new_text": "delta"},
    ])
    assert data["ok"]
    assert (ws / "a.txt").read_text() == "delta\n"


def test_no_match_names_the_count_and_shows_the_closest_region(ctx: ToolContext, ws: Path) -> None:
    body = "".join(f"line {i}\n" for i in range(1, 40)) + "def compute(x):\n    return x * 2\n"
    (ws / "m.py").write_text(body)
    data = patch(ctx, path="m.py", edits=[{"old_text": "def compute(y):\n    return y * 2", "new_text": "x"}])
    assert data["ok"] is False and one_sentence(data["error"])
    assert "0 matches" in data["error"] and "lines 40-41" in data["error"]
    assert data["closest"]["start_line"] == 40
    assert "    40| def compute(x):" in data["closest"]["text"]
    assert (ws / "m.py").read_text() == body


def test_whitespace_only_difference_is_called_out(ctx: ToolContext, ws: Path) -> None:
    (ws / "w.py").write_text("if x:\n        y = 1\n")
    data = patch(ctx, path="w.py", edits=[{"old_text": "if x:\n    y = 1", "new_text": "z"}])
    assert data["ok"] is False and "whitespace or indentation" in data["error"]


def test_multiple_matches_are_refused_with_count_and_lines(ctx: ToolContext, ws: Path) -> None:
    (ws / "d.txt").write_text("x = 1\ny = 2\nx = 1\n")
    data = patch(ctx, path="d.txt", edits=[{"old_text": "x = 1", "new_text": "x = 3"}])
    assert data["ok"] is False and one_sentence(data["error"])
    assert "matches 2 times" in data["error"] and "lines 1, 3" in data["error"]
    assert "replace_all" in data["error"]
    data = patch(ctx, path="d.txt", edits=[{"old_text": "x = 1", "new_text": "x = 3", "replace_all": True}])
    assert data["ok"] and data["replacements"] == 2
    assert (ws / "d.txt").read_text() == "x = 3\ny = 2\nx = 3\n"


def test_a_failing_later_edit_writes_nothing(ctx: ToolContext, ws: Path) -> None:
    (ws / "p.txt").write_text("one\ntwo\n")
    data = patch(ctx, path="p.txt", edits=[
        {"old_text": "one", "new_text": "ONE"},
        {"old_text": "three", "new_text": "THREE"},
    ])
    assert data["ok"] is False and data["error"].startswith("Edit 2 of 2")
    assert (ws / "p.txt").read_text() == "one\ntwo\n"


@pytest.mark.parametrize(("arguments", "fragment"), [
    ({"path": "a.txt"}, "exactly one of 'edits' or 'diff'"),
    ({"path": "a.txt", "edits": [{"old_text": "a", "new_text": "b"}], "diff": "@@ -1 +1 @@"}, "exactly one"),
    ({"path": "a.txt", "edits": []}, "edits"),
    ({"path": "a.txt", "edits": [{"old_text": "a", "new_text": "b", "extra": 1}]}, "extra"),
    ({"path": "a.txt", "edits": [{"old_text": "", "new_text": "b"}]}, "empty old_text"),
    ({"path": "missing.txt", "edits": [{"old_text": "a", "new_text": "b"}]}, "create it with write_file"),
    ({"path": "a.txt", "edits": [{"old_text": "a", "new_text": "\x00"}]}, "NUL"),
    ({"path": ".git/config", "edits": [{"old_text": "a", "new_text": "b"}]}, "inside .git"),
    ({"path": "../a.txt", "edits": [{"old_text": "a", "new_text": "b"}]}, "outside the workspace"),
])
def test_bad_calls_fail_with_one_sentence_and_touch_nothing(ctx: ToolContext, ws: Path, arguments: dict,
                                                           fragment: str) -> None:
    (ws / "a.txt").write_text("a\n")
    data = patch(ctx, **arguments)
    assert data["ok"] is False and fragment in data["error"] and one_sentence(data["error"])
    assert (ws / "a.txt").read_text() == "a\n"


def test_crlf_file_keeps_crlf_and_untouched_bytes(ctx: ToolContext, ws: Path) -> None:
    (ws / "w.txt").write_bytes(b"a\r\nb\r\nc\r\n")
    data = patch(ctx, path="w.txt", edits=[{"old_text": "b", "new_text": "B\nB2"}])
    assert data["ok"] and data["line_endings"] == "crlf"
    assert (ws / "w.txt").read_bytes() == b"a\r\nB\r\nB2\r\nc\r\n"


def test_mixed_endings_keep_each_untouched_line_ending(ctx: ToolContext, ws: Path) -> None:
    original = b"l1\r\nl2\nl3\r\nl4\nl5\r\n"
    (ws / "m.txt").write_bytes(original)
    data = patch(ctx, path="m.txt", edits=[{"old_text": "l3", "new_text": "L3"}])
    assert data["ok"] and data["line_endings"] == "mixed"
    # The changed line takes the dominant ending (3 CRLF vs 2 LF); every other line keeps its own.
    assert (ws / "m.txt").read_bytes() == b"l1\r\nl2\nL3\r\nl4\nl5\r\n"


def test_bom_and_executable_mode_survive_a_patch(ctx: ToolContext, ws: Path) -> None:
    script = ws / "run.sh"
    script.write_bytes(b"\xef\xbb\xbf#!/bin/sh\necho old\n")
    os.chmod(script, 0o755)
    assert patch(ctx, path="run.sh", edits=[{"old_text": "old", "new_text": "new"}])["ok"]
    assert script.read_bytes() == b"\xef\xbb\xbf#!/bin/sh\necho new\n"
    assert os.stat(script).st_mode & 0o777 == 0o755


def test_patch_result_carries_write_facts(ctx: ToolContext, ws: Path) -> None:
    (ws / "f.txt").write_text("v = 1\n")
    result = REGISTRY.execute("patch_file", {"path": "f.txt", "edits": [{"old_text": "1", "new_text": "42"}]}, ctx)
    assert result.facts["kind"] == "write" and result.facts["unchanged"] is False
    (entry,) = result.facts["writes"]
    assert entry["path"] == "f.txt" and entry["action"] == "update" and entry["bytes"] == len("v = 42\n")


def test_noop_patch_reports_unchanged_and_does_not_write(ctx: ToolContext, ws: Path) -> None:
    target = ws / "n.txt"
    target.write_text("same\n")
    before = os.stat(target).st_ino
    result = REGISTRY.execute("patch_file", {"path": "n.txt", "edits": [{"old_text": "same", "new_text": "same"}]},
                              ctx)
    assert result.ok and result.data["action"] == "unchanged" and result.facts["unchanged"] is True
    assert os.stat(target).st_ino == before


def test_stale_read_turns_patch_into_conflict(ctx: ToolContext, ws: Path) -> None:
    (ws / "s.txt").write_text("one\n")
    assert REGISTRY.execute("read_file", {"path": "s.txt"}, ctx).ok
    (ws / "s.txt").write_text("one\nuser typed this\n")
    data = patch(ctx, path="s.txt", edits=[{"old_text": "one", "new_text": "ONE"}])
    assert data["ok"] is False and "changed since you last read it" in data["error"]
    assert (ws / "s.txt").read_text() == "one\nuser typed this\n"


# --- unified diffs -------------------------------------------------------------------------------

BASE = "".join(f"line {i}\n" for i in range(1, 21))


def test_unified_diff_with_headers_applies(ctx: ToolContext, ws: Path) -> None:
    (ws / "u.txt").write_text(BASE)
    diff = (
        "diff --git a/u.txt b/u.txt\n--- a/u.txt\n+++ b/u.txt\n"
        "@@ -2,3 +2,3 @@\n line 2\n-line 3\n+LINE THREE\n line 4\n"
        "@@ -17,3 +17,4 @@\n line 17\n line 18\n+inserted\n line 19\n"
    )
    data = patch(ctx, path="u.txt", diff=diff)
    assert data["ok"] and data["hunks"] == 2
    expected = BASE.replace("line 3\n", "LINE THREE\n").replace("line 18\n", "line 18\ninserted\n")
    assert (ws / "u.txt").read_text() == expected


def test_hunk_with_wrong_line_number_applies_at_its_exact_context(ctx: ToolContext, ws: Path) -> None:
    (ws / "u.txt").write_text(BASE)
    data = patch(ctx, path="u.txt", diff="@@ -5,2 +5,2 @@\n line 9\n-line 10\n+ten\n")
    assert data["ok"] and "offsets [4]" in data["note"]
    assert "line 9\nten\nline 11" in (ws / "u.txt").read_text()


def test_failing_hunk_fails_the_whole_diff(ctx: ToolContext, ws: Path) -> None:
    (ws / "u.txt").write_text(BASE)
    diff = "@@ -1,2 +1,2 @@\n line 1\n-line 2\n+two\n@@ -10,2 +10,2 @@\n line 10\n-line 99\n+x\n"
    data = patch(ctx, path="u.txt", diff=diff)
    assert data["ok"] is False and data["error"].startswith("Hunk 2 of 2") and one_sentence(data["error"])
    assert data["closest"]["start_line"] == 10
    assert (ws / "u.txt").read_text() == BASE


def test_diff_no_newline_marker_removes_final_newline(ctx: ToolContext, ws: Path) -> None:
    (ws / "e.txt").write_text("a\nb\n")
    data = patch(ctx, path="e.txt", diff="@@ -1,2 +1,2 @@\n a\n-b\n+c\n\\ No newline at end of file\n")
    assert data["ok"]
    assert (ws / "e.txt").read_bytes() == b"a\nc"


def test_diff_keeps_crlf_of_untouched_lines(ctx: ToolContext, ws: Path) -> None:
    (ws / "c.txt").write_bytes(b"a\r\nb\r\nc\r\n")
    data = patch(ctx, path="c.txt", diff="--- a/c.txt\r\n+++ b/c.txt\r\n@@ -1,3 +1,3 @@\r\n a\r\n-b\r\n+B\r\n c\r\n")
    assert data["ok"]
    assert (ws / "c.txt").read_bytes() == b"a\r\nB\r\nc\r\n"


@pytest.mark.parametrize(("diff", "fragment"), [
    ("--- a/other.txt\n+++ b/other.txt\n@@ -1 +1 @@\n-a\n+b\n", "is for other.txt"),
    ("--- a/u.txt\n+++ b/u.txt\n@@ -1 +1 @@\n-line 1\n+x\n--- a/v.txt\n+++ b/v.txt\n@@ -1 +1 @@\n-a\n+b\n",
     "more than one file"),
    ("--- a/u.txt\n+++ /dev/null\n@@ -1 +0,0 @@\n-line 1\n", "deletes"),
    ("--- /dev/null\n+++ b/u.txt\n@@ -0,0 +1 @@\n+x\n", "use write_file"),
    ("just some text\n", "before any '@@' hunk header"),
    ("@@ -1 +1 @@\n*line 1\n", "does not start with"),
])
def test_malformed_diffs_are_refused(ctx: ToolContext, ws: Path, diff: str, fragment: str) -> None:
    (ws / "u.txt").write_text(BASE)
    data = patch(ctx, path="u.txt", diff=diff)
    assert data["ok"] is False and fragment in data["error"] and one_sentence(data["error"])
    assert (ws / "u.txt").read_text() == BASE
