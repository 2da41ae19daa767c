"""The walker's glob shortcuts (name-only matching, first-pass exclusion) decide as the full path rule does."""

from __future__ import annotations

import itertools
import os
from pathlib import Path

import pytest

from k1412_ls.tools.files.file_tools import ListFilesArgs, list_files
from k1412_ls.tools.files.ignore import GlobFilter
from k1412_ls.tools.registry import ToolContext

GLOBS = ["*.py", "!*.py", "file_0*.py", "?x.md", "[ab]*.txt", "[!a]*", "build/", "!build/", "*.log",
         "src/*.py", "**/*.py", "**", "a/**/b.py", "/top.py", "\\!bang", "*", "!*", "docs/", "*.d/"]
RELS = ["a.py", "src/a.py", "src/deep/b.py", "x.md", "ax.md", "b/ax.md", "a.txt", "c.txt", "build",
        "src/build", "top.py", "src/top.py", "!bang", "a/b.py", "a/x/b.py", "docs", "out.log", "v.d",
        "file_01.py", "src/file_0.py"]


@pytest.mark.parametrize("glob", GLOBS)
def test_name_only_matching_agrees_with_the_whole_path(glob: str) -> None:
    flt = GlobFilter(glob)
    for rel, is_dir in itertools.product(RELS, (False, True)):
        name = rel.rsplit("/", 1)[-1]
        assert flt.decide(rel, is_dir, name) == flt.decide(rel, is_dir), (glob, rel, is_dir)
        if not is_dir and flt.file_name_match is not None and flt.file_name_match(name) is None:
            assert flt.decide(rel, is_dir) is True, (glob, rel)  # excluded in the first pass: rightly


def test_list_files_with_globs_keeps_symlinks_other_files_and_ignore_overrides(ctx: ToolContext, ws: Path) -> None:
    (ws / "src" / "deep").mkdir(parents=True)
    (ws / ".gitignore").write_text("*.log\nbuild/\n")
    for rel in ("a.py", "src/b.py", "src/deep/c.py", "run.log", "src/notes.txt", ".hidden.py"):
        (ws / rel).write_text("x\n")
    (ws / "build").mkdir()
    (ws / "build" / "gen.py").write_text("x\n")
    os.symlink("a.py", ws / "link.py")
    os.mkfifo(ws / "pipe.py")
    os.symlink("src", ws / "srclink")

    def listed(glob: str | None, depth: int = 5) -> list[str]:
        result = list_files(ListFilesArgs(path=".", depth=depth, glob=glob), ctx)
        return list(result.data["entries"])

    assert listed("*.py") == [".hidden.py", "a.py", "link.py -> a.py", "pipe.py", "src/b.py", "src/deep/c.py"]
    assert listed("*.log") == ["run.log"]  # a positive glob overrides the ignore file (like rg --glob)
    assert listed("!*.py") == [".gitignore", "src/notes.txt", "srclink -> src"]  # no directories with a glob
    assert listed("src/*.py") == ["src/b.py"]
    assert listed("**/c.py") == ["src/deep/c.py"]
    assert listed("*.py", depth=1) == [".hidden.py", "a.py", "link.py -> a.py", "pipe.py"]
    assert listed(None, depth=1) == [".gitignore", ".hidden.py", "a.py", "link.py -> a.py", "pipe.py", "src/",
                                     "srclink -> src"]
