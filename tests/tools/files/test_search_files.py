"""search_files: ripgrep and the pure-Python fallback give the same results on the same tree."""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import pytest

from k1412_ls.tools.files import search as search_module
from k1412_ls.tools.files.documents import DiskDocumentStore
from k1412_ls.tools.files.search import TOOLS, python_search, rg_search
from k1412_ls.tools.files.workspace import Workspace
from k1412_ls.tools.registry import ToolContext, ToolRegistry

RG = shutil.which("rg")
needs_rg = pytest.mark.skipif(RG is None, reason="ripgrep is not installed")


def build_tree(root: Path) -> None:
    files: dict[str, bytes] = {
        ".gitignore": b"*.log\nbuild/\n!keep.log\n/anchored.txt\ndocs/**/secret*\n",
        "a.txt": b"hello world\nbye\nHello again hello\n",
        "A.txt": b"upper hello\n",
        "a/b.txt": b"nested hello\n",
        "a.b/c.txt": b"dotted dir hello\n",
        "keep.log": b"hello keep\n",
        "x.log": b"hello ignored log\n",
        "build/out.txt": b"hello build\n",
        "anchored.txt": b"hello anchored root\n",
        "sub/anchored.txt": b"hello anchored sub\n",
        "sub/.gitignore": b"local.txt\n",
        "sub/local.txt": b"hello local ignored\n",
        "local.txt": b"hello local kept\n",
        ".hidden/h.txt": b"hello hidden\n",
        ".git/config": b"hello git internals\n",
        "bin.dat": b"hello\x00binary\n",
        "crlf.txt": b"hello crlf\r\nworld hello\r\n",
        "bom.txt": b"\xef\xbb\xbfhello bom\n",
        "utf16.txt": "hello utf16\n".encode("utf-16"),
        "long.txt": b"x" * 5000 + b"hello\n",
        "long2.txt": b"hello " + b"y" * 3000 + b"\n",
        "uni.txt": "héllo hello wörld\n".encode(),
        "bad.txt": b"abc \xff hello\n",
        "docs/x/secret.txt": b"hello secret\n",
        "docs/x/public.txt": b"hello public\n",
        "sp ace.txt": b"hello space\n",
        "c:olon.txt": b"hello colon\n",
        "opt.txt": b"an option --pre=sh here\n",
        "noeol.txt": b"last hello",
    }
    for rel, data in files.items():
        path = root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(data)
    os.symlink("a.txt", root / "link.txt")
    os.symlink("sub", root / "linkdir")


@pytest.fixture()
def tree(tmp_path: Path) -> Path:
    root = tmp_path / "ws"
    root.mkdir()
    build_tree(root)
    return root


CASES = [
    pytest.param("hello", False, None, ".", id="literal"),
    pytest.param("h[a-z]llo", True, None, ".", id="regex-class"),
    pytest.param("^bye$", True, None, ".", id="regex-anchors"),
    pytest.param("--pre=sh", False, None, ".", id="option-looking-query"),
    pytest.param("hello", False, "*.txt", ".", id="glob-include"),
    pytest.param("hello", False, "!*.txt", ".", id="glob-exclude"),
    pytest.param("hello", False, "sub/*", ".", id="glob-anchored"),
    pytest.param("hello", False, None, "sub", id="subdir-with-root-gitignore"),
    pytest.param("hello", False, None, "docs", id="subdir-globstar-ignore"),
    pytest.param("hello", False, None, "a.txt", id="single-file"),
    pytest.param("wörld", False, None, ".", id="non-ascii"),
]


@needs_rg
@pytest.mark.parametrize(("query", "regex", "glob", "path"), CASES)
def test_ripgrep_and_python_backends_agree(tree: Path, query: str, regex: bool, glob: str | None,
                                           path: str) -> None:
    start = tree / path
    assert RG is not None
    with_rg = rg_search(RG, tree, start, query, regex, glob, 1000)
    with_python = python_search(tree, start, query, regex, glob, 1000)
    assert with_rg == with_python


@needs_rg
@pytest.mark.parametrize("limit", [1, 3, 7])
def test_backends_agree_on_which_matches_a_cap_keeps(tree: Path, limit: int) -> None:
    assert RG is not None
    assert rg_search(RG, tree, tree, "hello", False, None, limit) == python_search(
        tree, tree, "hello", False, None, limit)


def run_search(root: Path, **arguments: object) -> dict:
    ctx = ToolContext(workspace=Workspace(root), documents=DiskDocumentStore(root))
    return ToolRegistry(TOOLS).execute("search_files", dict(arguments), ctx).data


@pytest.fixture(params=["ripgrep", "python"])
def backend(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> str:
    if request.param == "ripgrep" and RG is None:
        pytest.skip("ripgrep is not installed")
    if request.param == "python":
        monkeypatch.setattr(search_module, "trusted_program", lambda name: None)
    return str(request.param)


def test_results_skip_ignored_binary_git_and_symlinks(tree: Path, backend: str) -> None:
    data = run_search(tree, query="hello")
    assert data["ok"] and data["backend"] == backend
    paths = {m["path"] for m in data["matches"]}
    assert {"a.txt", "keep.log", "sub/anchored.txt", "local.txt", ".hidden/h.txt", "crlf.txt",
            "utf16.txt", "docs/x/public.txt", "c:olon.txt", "noeol.txt"} <= paths
    assert not paths & {"x.log", "build/out.txt", "anchored.txt", "sub/local.txt", ".git/config",
                        "bin.dat", "link.txt", "linkdir/anchored.txt", "docs/x/secret.txt"}


def test_results_are_sorted_by_path_then_line(tree: Path, backend: str) -> None:
    matches = run_search(tree, query="hello")["matches"]
    keys = [(m["path"].split("/"), m["line"]) for m in matches]
    assert keys == sorted(keys)
    assert [m["line"] for m in matches if m["path"] == "a.txt"] == [1, 3]


def test_match_fields_give_line_column_and_clean_text(tree: Path, backend: str) -> None:
    matches = {(m["path"], m["line"]): m for m in run_search(tree, query="hello")["matches"]}
    assert matches[("crlf.txt", 2)] == {"path": "crlf.txt", "line": 2, "column": 7, "text": "world hello"}
    assert matches[("bom.txt", 1)]["column"] == 1
    assert matches[("uni.txt", 1)]["column"] == 7
    assert matches[("long.txt", 1)]["column"] == 5001
    assert matches[("long.txt", 1)]["text"] == "x" * 300 + " …[line truncated]"
    assert matches[("long2.txt", 1)]["text"].endswith("…[line truncated]")


def test_max_results_truncates_and_says_so(tree: Path, backend: str) -> None:
    data = run_search(tree, query="hello", max_results=2)
    assert data["count"] == 2 and data["truncated"] is True
    assert "narrow" in data["note"]


def test_invalid_regex_is_one_sentence(tree: Path, backend: str) -> None:
    data = run_search(tree, query="(unclosed", regex=True)
    assert data["ok"] is False
    assert "regex is invalid" in data["error"] and "\n" not in data["error"]
    assert data["error"].endswith(".")


def test_option_like_query_is_searched_as_text(tree: Path, backend: str) -> None:
    data = run_search(tree, query="--pre=sh")
    assert data["ok"] is True
    assert [m["path"] for m in data["matches"]] == ["opt.txt"]


@pytest.mark.parametrize(("arguments", "fragment"), [
    ({"query": "a\nb"}, "within one line"),
    ({"query": "x", "path": "../"}, "outside the workspace"),
    ({"query": "x", "path": "missing"}, "does not exist"),
    ({"query": "x", "max_results": 0}, "max_results"),
    ({"query": ""}, "query"),
])
def test_bad_arguments_fail_with_one_sentence(tree: Path, arguments: dict, fragment: str) -> None:
    data = run_search(tree, **arguments)
    assert data["ok"] is False and fragment in data["error"] and "\n" not in data["error"]


def test_symlinked_search_path_leading_outside_is_refused(tmp_path: Path) -> None:
    root = tmp_path / "ws"
    outside = tmp_path / "outside"
    root.mkdir()
    outside.mkdir()
    (outside / "secret.txt").write_text("hello secret\n")
    os.symlink(outside, root / "out")
    data = run_search(root, query="hello", path="out")
    assert data["ok"] is False and "outside the workspace" in data["error"]
    data = run_search(root, query="hello")
    assert data["ok"] is True and data["matches"] == []


def test_max_results_above_the_cap_is_served_at_the_cap(tmp_path: Path) -> None:
    root = tmp_path / "ws"
    root.mkdir()
    (root / "many.txt").write_text("hit\n" * 1500)
    data = run_search(root, query="hit", max_results=5000)
    assert data["ok"] and data["count"] == 1000 and data["truncated"] is True
