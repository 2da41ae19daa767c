"""apply_patch: parse errors, fuzzy matching, confinement, line endings, modes, conflicts, CLI."""

from __future__ import annotations

import hashlib
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from k1412_ls.tools.files.apply_patch import TOOLS
from k1412_ls.tools.files.apply_patch.parser import (
    AddFile,
    DeleteFile,
    PatchParseError,
    UpdateFile,
    parse_patch,
)
from k1412_ls.tools.files.apply_patch.seek import LineMatcher
from k1412_ls.tools.files.documents import DiskDocumentStore
from k1412_ls.tools.files.workspace import Workspace
from k1412_ls.tools.registry import ReadRecord, ToolContext, ToolRegistry, ToolResult

REPO = Path(__file__).resolve().parents[3]


def make_ctx(root: Path) -> ToolContext:
    return ToolContext(workspace=Workspace(root), documents=DiskDocumentStore())


def run(ctx: ToolContext, patch: str) -> ToolResult:
    return ToolRegistry(TOOLS).execute("apply_patch", {"patch": patch}, ctx)


def patch_of(*body: str) -> str:
    return "\n".join(["*** Begin Patch", *body, "*** End Patch"]) + "\n"


def tree(root: Path) -> dict[str, bytes | None]:
    out: dict[str, bytes | None] = {}
    for path in sorted(root.rglob("*")):
        rel = path.relative_to(root).as_posix()
        out[rel] = None if path.is_dir() or path.is_symlink() else path.read_bytes()
    return out


# --- parsing ---------------------------------------------------------------------------------

PARSE_ERRORS = [
    ("not a patch", "Invalid patch: The first line of the patch must be '*** Begin Patch'"),
    ("*** Begin Patch\n*** Add File: a\n+x", "Invalid patch: The last line of the patch must be '*** End Patch'"),
    (patch_of("*** Frobnicate File: foo"),
     "Invalid patch hunk on line 2: '*** Frobnicate File: foo' is not a valid hunk header. Valid hunk headers: "
     "'*** Add File: {path}', '*** Delete File: {path}', '*** Update File: {path}'"),
    (patch_of("*** Update File: foo.txt"), "Invalid patch hunk on line 2: Update file hunk for path 'foo.txt' is empty"),
    (patch_of("*** Update File: a", "@@", "-x", "+y", "stray line"),
     "Invalid patch hunk on line 6: Expected update hunk to start with a @@ context marker, got: 'stray line'"),
    (patch_of("*** Update File: a", "@@"), "Invalid patch hunk on line 4: Update hunk does not contain any lines"),
    (patch_of("*** Update File: a", "@@", "*** End of File"),
     "Invalid patch hunk on line 4: Update hunk does not contain any lines"),
    (patch_of("*** Update File: a", "@@ class A", "@@ def f():", "-x"),
     "Invalid patch hunk on line 4: Unexpected line found in update hunk: '@@ def f():'. Every line should start "
     "with ' ' (context line), '+' (added line), or '-' (removed line)"),
    (patch_of("*** Delete File: a", "+junk"),
     "Invalid patch hunk on line 3: '+junk' is not a valid hunk header. Valid hunk headers: "
     "'*** Add File: {path}', '*** Delete File: {path}', '*** Update File: {path}'"),
]


@pytest.mark.parametrize(("text", "message"), PARSE_ERRORS)
def test_parse_errors_use_upstream_messages(text: str, message: str) -> None:
    with pytest.raises(PatchParseError) as caught:
        parse_patch(text)
    assert str(caught.value) == message


@pytest.mark.parametrize("text", [entry[0] for entry in PARSE_ERRORS])
def test_parse_error_changes_nothing_and_tells_the_model(ws: Path, text: str) -> None:
    (ws / "a").write_text("x\n")
    before = tree(ws)
    result = run(make_ctx(ws), text)
    assert not result.ok
    assert result.data["error"].startswith("Invalid patch")
    assert "nothing was changed" in result.data["error"]
    assert result.facts == {"kind": "write", "writes": [], "unchanged": False}
    assert tree(ws) == before


def test_parse_all_section_kinds() -> None:
    sections = parse_patch(patch_of(
        "*** Add File: path/add.py", "+abc", "+def",
        "  *** Delete File: path/delete.py",
        "*** Update File: path/update.py", "*** Move to: path/update2.py",
        "@@ def f():", "-    pass", "+    return 123", "", "@@", " tail", "+more", "*** End of File",
        "", "*** Delete File: last.txt",
    ))
    assert sections[0] == AddFile("path/add.py", "abc\ndef\n")
    assert sections[1] == DeleteFile("path/delete.py")
    assert sections[3] == DeleteFile("last.txt")
    update = sections[2]
    assert isinstance(update, UpdateFile)
    assert (update.path, update.move_to) == ("path/update.py", "path/update2.py")
    assert [(c.context, c.old_lines, c.new_lines, c.is_end_of_file) for c in update.chunks] == [
        # An empty line inside a chunk is an empty context line, as upstream reads it.
        ("def f():", ("    pass", ""), ("    return 123", ""), False),
        (None, ("tail",), ("tail", "more"), True),
    ]


@pytest.mark.parametrize("opener", ["<<EOF", "<<'EOF'", '<<"EOF"'])
def test_heredoc_wrapper_is_tolerated(opener: str) -> None:
    text = f"{opener}\n*** Begin Patch\n*** Add File: a.txt\n+hi\n*** End Patch\nEOF\n"
    assert parse_patch(text) == [AddFile("a.txt", "hi\n")]


def test_mismatched_heredoc_quotes_are_not_unwrapped() -> None:
    with pytest.raises(PatchParseError, match="first line"):
        parse_patch("<<\"EOF'\n*** Begin Patch\n*** Add File: a\n+hi\n*** End Patch\nEOF\n")


def test_crlf_patch_text_parses_like_lf() -> None:
    text = patch_of("*** Update File: a", "@@", "-x", "+y").replace("\n", "\r\n")
    [update] = parse_patch(text)
    assert isinstance(update, UpdateFile)
    assert update.chunks[0].old_lines == ("x",) and update.chunks[0].new_lines == ("y",)


# --- locating lines ---------------------------------------------------------------------------

SEEK_CASES = [
    # (file lines, pattern, expected index): each pass, and the stricter pass winning.
    (["foo", "bar", "baz"], ["bar", "baz"], 1),
    (["foo   ", "bar\t\t"], ["foo", "bar"], 0),
    (["    foo   ", "   bar\t"], ["foo", "bar"], 0),
    (["x = a \u2013 b"], ["x = a - b"], 0),
    (["say \u201chi\u201d and \u2018bye\u2019"], ["say \"hi\" and 'bye'"], 0),
    (["a\u00a0b", "c\u2009d"], ["a b", "c d"], 0),
    (["foo ", "foo"], ["foo"], 1),
    (["just one"], ["too", "many", "lines"], None),
    (["a", "b"], ["c"], None),
]


@pytest.mark.parametrize(("lines", "pattern", "expected"), SEEK_CASES)
def test_seek_passes(lines: list[str], pattern: list[str], expected: int | None) -> None:
    assert LineMatcher(lines).seek(pattern, 0) == expected


def test_seek_end_of_file_tries_only_the_last_position() -> None:
    matcher = LineMatcher(["x", "y", "x", "z"])
    assert matcher.seek(["x"], 0) == 0
    assert matcher.seek(["z"], 0, eof=True) == 3
    assert matcher.seek(["x"], 0, eof=True) is None


FUZZY_UPDATES = [
    ("trailing whitespace", "foo   \nbar\n", "foo", "FOO\nbar\n"),
    ("indentation", "    foo\nbar\n", "foo", "FOO\nbar\n"),
    ("en dash", "a \u2013 b\n", "a - b", "FOO\n"),
    ("em dash and minus", "x\u2014y\u2212z\n", "x-y-z", "FOO\n"),
    ("curly quotes", "say \u201chi\u201d\n", 'say "hi"', "FOO\n"),
    ("NBSP", "a\u00a0b\n", "a b", "FOO\n"),
    ("exact match preferred", "foo \nfoo\n", "foo", "foo \nFOO\n"),
]


@pytest.mark.parametrize(("case", "content", "old", "expected"), FUZZY_UPDATES, ids=[c[0] for c in FUZZY_UPDATES])
def test_fuzzy_update(ws: Path, case: str, content: str, old: str, expected: str) -> None:
    (ws / "f.txt").write_text(content, encoding="utf-8")
    result = run(make_ctx(ws), patch_of("*** Update File: f.txt", "@@", f"-{old}", "+FOO"))
    assert result.ok, result.data
    assert (ws / "f.txt").read_text(encoding="utf-8") == expected


def test_end_of_file_marker_anchors_the_chunk_at_the_end(ws: Path) -> None:
    (ws / "f.txt").write_text("x\ny\nx\n")
    assert run(make_ctx(ws), patch_of("*** Update File: f.txt", "@@", "-x", "+END", "*** End of File")).ok
    assert (ws / "f.txt").read_text() == "x\ny\nEND\n"
    assert run(make_ctx(ws), patch_of("*** Update File: f.txt", "@@", "-x", "+TOP")).ok
    assert (ws / "f.txt").read_text() == "TOP\ny\nEND\n"


def test_end_of_file_chunk_not_at_the_end_fails(ws: Path) -> None:
    (ws / "f.txt").write_text("x\ny\n")
    result = run(make_ctx(ws), patch_of("*** Update File: f.txt", "@@", "-x", "+z", "*** End of File"))
    assert not result.ok
    assert "Failed to find expected lines in f.txt" in result.data["error"]
    assert (ws / "f.txt").read_text() == "x\ny\n"


def test_context_line_moves_the_cursor(ws: Path) -> None:
    (ws / "f.py").write_text("def a():\n    return 1\ndef b():\n    return 1\n")
    assert run(make_ctx(ws), patch_of("*** Update File: f.py", "@@ def b():", "-    return 1", "+    return 2")).ok
    assert (ws / "f.py").read_text() == "def a():\n    return 1\ndef b():\n    return 2\n"


def test_missing_context_line_is_reported(ws: Path) -> None:
    (ws / "f.py").write_text("a\n")
    result = run(make_ctx(ws), patch_of("*** Update File: f.py", "@@ def nowhere():", "-a", "+b"))
    assert not result.ok
    assert "Failed to find context 'def nowhere():' in f.py" in result.data["error"]


@pytest.mark.parametrize(("content", "expected"), [
    ("a\nb\n", "a\nb\nadded\n"),
    ("a\nb", "a\nb\nadded\n"),
    # Upstream inserts before the final blank line, which then serves as the final newline.
    ("a\n\n", "a\nadded\n"),
    ("", "added\n"),
])
def test_pure_addition_appends_at_the_end(ws: Path, content: str, expected: str) -> None:
    (ws / "f.txt").write_text(content)
    assert run(make_ctx(ws), patch_of("*** Update File: f.txt", "@@", "+added")).ok
    assert (ws / "f.txt").read_text() == expected


def test_missing_lines_are_listed_and_capped(ws: Path) -> None:
    (ws / "x.py").write_text("real\n")
    missing = [f"-missing line {i}" for i in range(60)]
    result = run(make_ctx(ws), patch_of("*** Update File: x.py", "@@", *missing, "+new"))
    error = result.data["error"]
    assert error.startswith("Failed to find expected lines in x.py; read x.py again")
    assert "nothing was changed" in error
    assert "missing line 0\nmissing line 1\n" in error
    assert "missing line 59" not in error and "[40 more lines]" in error


def test_many_chunks_in_a_large_file(ws: Path) -> None:
    lines = [f"line {i}" for i in range(50_000)]
    (ws / "big.txt").write_text("\n".join(lines) + "\n")
    body: list[str] = []
    for i in range(0, 50_000, 500):
        body += ["@@", f" line {i}", f"-line {i + 1}", f"+LINE {i + 1}"]
        lines[i + 1] = f"LINE {i + 1}"
    assert run(make_ctx(ws), patch_of("*** Update File: big.txt", *body)).ok
    assert (ws / "big.txt").read_text() == "\n".join(lines) + "\n"


# --- confinement: one bad path changes nothing ----------------------------------------------

BAD_PATHS = [
    ("absolute /etc", "*** Add File: /etc/k1412-should-not-exist", ["+x"]),
    ("dotdot add", "*** Add File: ../escape.txt", ["+x"]),
    ("git config", "*** Add File: .git/config", ["+[core]"]),
    ("GIT hook case variant", "*** Add File: .GIT/hooks/pre-commit", ["+#!/bin/sh"]),
    ("symlink to outside", "*** Add File: outlink/evil.txt", ["+x"]),
    ("symlinked file to outside", "*** Update File: outfile", ["@@", "-secret", "+pwned"]),
    ("move to dotdot", "*** Update File: keep.txt", ["*** Move to: ../x", "@@", "-keep", "+moved"]),
    ("delete outside", "*** Delete File: ../outside/secret.txt", []),
]


@pytest.mark.parametrize(("case", "header", "body"), BAD_PATHS, ids=[c[0] for c in BAD_PATHS])
def test_bad_path_refuses_the_whole_patch(ws: Path, case: str, header: str, body: list[str]) -> None:
    outside = ws.parent / "outside"
    outside.mkdir()
    (outside / "secret.txt").write_text("secret\n")
    (ws / ".git").mkdir()
    (ws / "keep.txt").write_text("keep\n")
    (ws / "outlink").symlink_to(outside, target_is_directory=True)
    (ws / "outfile").symlink_to(outside / "secret.txt")
    before, before_outside = tree(ws), tree(ws.parent)

    # A valid first section must not be applied either: every path is checked up front.
    result = run(make_ctx(ws), patch_of("*** Add File: first.txt", "+first", header, *body))

    assert not result.ok
    assert result.data["error"].startswith("Nothing was changed:")
    assert result.data["applied"] == []
    assert tree(ws) == before
    assert tree(ws.parent) == before_outside
    assert not Path("/etc/k1412-should-not-exist").exists()


def test_deleting_a_symlink_is_refused(ws: Path) -> None:
    (ws / "target.txt").write_text("t\n")
    (ws / "link.txt").symlink_to(ws / "target.txt")
    result = run(make_ctx(ws), patch_of("*** Delete File: link.txt"))
    assert not result.ok and "symbolic link" in result.data["error"]
    assert (ws / "target.txt").read_text() == "t\n" and (ws / "link.txt").is_symlink()


# --- bytes, modes and conflicts ----------------------------------------------------------------

def test_crlf_file_keeps_crlf_and_bom(ws: Path) -> None:
    (ws / "win.txt").write_bytes(b"\xef\xbb\xbfone\r\ntwo\r\nthree\r\n")
    result = run(make_ctx(ws), patch_of("*** Update File: win.txt", "@@", " one", "-two", "+TWO", "+2b"))
    assert result.ok, result.data
    assert (ws / "win.txt").read_bytes() == b"\xef\xbb\xbfone\r\nTWO\r\n2b\r\nthree\r\n"


def test_executable_file_keeps_its_mode(ws: Path) -> None:
    script = ws / "run.sh"
    script.write_text("#!/bin/sh\necho old\n")
    script.chmod(0o755)
    assert run(make_ctx(ws), patch_of("*** Update File: run.sh", "@@", "-echo old", "+echo new")).ok
    assert script.read_text() == "#!/bin/sh\necho new\n"
    assert script.stat().st_mode & 0o777 == 0o755


def test_moved_executable_keeps_its_mode_and_reports_a_move(ws: Path) -> None:
    script = ws / "old.sh"
    script.write_text("echo old\n")
    script.chmod(0o750)
    result = run(make_ctx(ws), patch_of("*** Update File: old.sh", "*** Move to: bin/new.sh", "@@", "-echo old",
                                        "+echo new"))
    assert result.ok, result.data
    moved = ws / "bin" / "new.sh"
    assert not script.exists() and moved.read_text() == "echo new\n"
    assert moved.stat().st_mode & 0o777 == 0o750
    [entry] = result.facts["writes"]
    assert (entry["action"], entry["path"], entry["from"]) == ("move", "bin/new.sh", "old.sh")
    assert entry["sha256"] == hashlib.sha256(b"echo new\n").hexdigest()
    assert result.data["summary"] == "M bin/new.sh"


def test_file_changed_after_the_agent_read_it_is_a_conflict(ws: Path) -> None:
    ctx = make_ctx(ws)
    target = ws / "notes.txt"
    target.write_text("what the agent saw\n")
    ctx.reads[target.resolve()] = ReadRecord(sha256=hashlib.sha256(b"what the agent saw\n").hexdigest())
    target.write_text("the user typed this\n")

    result = run(ctx, patch_of("*** Add File: first.txt", "+x", "*** Update File: notes.txt", "@@",
                               "-the user typed this", "+agent edit"))

    assert not result.ok
    assert "changed since you last read it" in result.data["error"]
    assert target.read_text() == "the user typed this\n"
    assert not (ws / "first.txt").exists()


def test_file_the_agent_read_unchanged_is_updated(ws: Path) -> None:
    ctx = make_ctx(ws)
    target = ws / "notes.txt"
    target.write_text("seen\n")
    ctx.reads[target.resolve()] = ReadRecord(sha256=hashlib.sha256(b"seen\n").hexdigest())
    assert run(ctx, patch_of("*** Update File: notes.txt", "@@", "-seen", "+edited")).ok
    assert run(ctx, patch_of("*** Update File: notes.txt", "@@", "-edited", "+edited twice")).ok
    assert target.read_text() == "edited twice\n"


@pytest.mark.parametrize("patch_body", [
    ["*** Update File: blob.bin", "@@", "-a", "+b"],
    ["*** Add File: blob.bin", "+text"],
    ["*** Update File: text.txt", "*** Move to: blob.bin", "@@", "-t", "+u"],
])
def test_binary_targets_are_refused(ws: Path, patch_body: list[str]) -> None:
    (ws / "blob.bin").write_bytes(b"a\n\x00\x01\x02\xff")
    (ws / "text.txt").write_text("t\n")
    before = tree(ws)
    result = run(make_ctx(ws), patch_of(*patch_body))
    assert not result.ok and "binary" in result.data["error"]
    assert tree(ws) == before


def test_oversized_patch_is_refused(ws: Path) -> None:
    huge = patch_of("*** Add File: big.txt", *(["+" + "x" * 1023] * 10_300))
    result = run(make_ctx(ws), huge)
    assert not result.ok and "10 MB" in result.data["error"]
    assert not (ws / "big.txt").exists()


# --- results and evidence ------------------------------------------------------------------------

def test_partial_failure_keeps_earlier_sections_and_reports_them(ws: Path) -> None:
    result = run(make_ctx(ws), patch_of("*** Add File: created.txt", "+hello", "*** Update File: missing.txt",
                                        "@@", "-old", "+new"))
    assert not result.ok
    assert result.data["applied"] == ["A created.txt"]
    assert "Failed to read file to update missing.txt: No such file or directory" in result.data["error"]
    assert "resend only the remaining sections" in result.data["error"]
    assert (ws / "created.txt").read_text() == "hello\n"
    assert [(w["path"], w["action"]) for w in result.facts["writes"]] == [("created.txt", "create")]


def test_success_summary_files_and_facts(ws: Path) -> None:
    (ws / "gone.txt").write_text("bye\n")
    (ws / "mod.txt").write_text("a\nb\n")
    result = run(make_ctx(ws), patch_of(
        "*** Delete File: gone.txt", "*** Update File: mod.txt", "@@", "-b", "+c", "*** Add File: new/file.txt", "+n",
    ))
    assert result.ok, result.data
    assert result.data["summary"] == "A new/file.txt\nM mod.txt\nD gone.txt"
    assert result.data["files"] == ["gone.txt", "mod.txt", "new/file.txt"]
    actions: list[Any] = [(w["path"], w["action"]) for w in result.facts["writes"]]
    assert actions == [("gone.txt", "delete"), ("mod.txt", "update"), ("new/file.txt", "create")]
    assert not (ws / "gone.txt").exists() and (ws / "mod.txt").read_text() == "a\nc\n"


def test_empty_patch_modifies_nothing(ws: Path) -> None:
    result = run(make_ctx(ws), patch_of())
    assert not result.ok and result.data["error"].startswith("No files were modified")


def test_tool_declaration() -> None:
    [tool] = TOOLS
    assert tool.name == "apply_patch" and not tool.parallel_safe and not tool.read_only
    assert tool.tags == frozenset({"core"}) and tool.body_fields == frozenset({"patch"})
    params = tool.schema()["function"]["parameters"]
    assert params["additionalProperties"] is False and params["required"] == ["patch"]
    result = ToolRegistry(TOOLS).execute("apply_patch", {"patch": "x", "path": "y"}, make_ctx(Path("/tmp")))
    assert not result.ok and "Invalid arguments" in result.data["error"]


# --- command line --------------------------------------------------------------------------------

def cli(cwd: Path, *args: str, stdin: str = "") -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    return subprocess.run([sys.executable, "-m", "k1412_ls.tools.files.apply_patch", *args], cwd=cwd, input=stdin,
                          capture_output=True, text=True, env=env, timeout=60)


@pytest.mark.e2e
def test_cli_success_failure_and_usage(ws: Path) -> None:
    ok = cli(ws, stdin=patch_of("*** Add File: hello.txt", "+hi"))
    assert (ok.returncode, ok.stdout) == (0, "Success. Updated the following files:\nA hello.txt\n")
    failed = cli(ws, patch_of("*** Update File: hello.txt", "@@", "-nope", "+x"))
    assert failed.returncode == 1
    assert failed.stderr == "Failed to find expected lines in hello.txt:\nnope\n"
    refused = cli(ws, patch_of("*** Add File: ../out.txt", "+x"))
    assert refused.returncode == 1 and "outside the workspace" in refused.stderr
    assert not (ws.parent / "out.txt").exists()
    assert cli(ws, "one", "two").returncode == 2
    assert cli(ws).returncode == 2
    assert (ws / "hello.txt").read_text() == "hi\n"


def test_cancelled_run_applies_nothing(ws: Path) -> None:
    ctx = make_ctx(ws)
    ctx.cancel.set()
    result = run(ctx, patch_of("*** Add File: a.txt", "+x"))
    assert not result.ok and "cancelled" in result.data["error"]
    assert not (ws / "a.txt").exists()


def test_move_onto_itself_is_an_update(ws: Path) -> None:
    (ws / "same.txt").write_text("old\n")
    result = run(make_ctx(ws), patch_of("*** Update File: same.txt", "*** Move to: same.txt", "@@", "-old", "+new"))
    assert result.ok, result.data
    assert (ws / "same.txt").read_text() == "new\n"
