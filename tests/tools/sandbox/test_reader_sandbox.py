"""search_files' kept sandbox: the same results as a fresh sandbox per search, and no less confinement.

ripgrep runs inside one long-lived bubblewrap sandbox (``tools.sandbox.reader_sandbox``) instead of a new one
per search. These tests pin that its results equal a fresh sandbox's and bare ripgrep's on generated
trees (binary files, long lines, non-UTF-8, symlinks, ignored files), that it survives the thread that
started it, that it is rebuilt when what it covers changes on the host, and that kill still kills.
"""

from __future__ import annotations

import os
import random
import shutil
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from k1412_ls.tools.files.documents import DiskDocumentStore
from k1412_ls.tools.files.search import TOOLS, rg_search
from k1412_ls.tools.files.workspace import Workspace
from k1412_ls.tools.registry import ToolContext, ToolRegistry
from k1412_ls.tools.sandbox import reader_sandbox
from k1412_ls.tools.sandbox.command_sandbox import (
    SandboxPolicy,
    bubblewrap,
    fixed_paths,
    hide_from_commands,
    reader_argv,
)
from k1412_ls.tools.sandbox.reader_sandbox import (
    ReaderSandbox,
    SandboxedProcess,
    close_reader_sandbox,
    start_reader,
)
from k1412_ls.tools.sandbox.trusted import trusted_program

RG = trusted_program("rg")
pytestmark = pytest.mark.skipif(not bubblewrap().active or RG is None, reason="needs bubblewrap and ripgrep")
SECRET = "KEPT-SANDBOX-SECRET-51c2"
REGISTRY = ToolRegistry(TOOLS)


@pytest.fixture(autouse=True)
def fresh_kept_sandbox() -> Iterator[None]:
    close_reader_sandbox()
    yield
    close_reader_sandbox()


def generated_tree(root: Path, seed: int) -> None:
    """A tree with every kind of file search treats specially, shuffled by ``seed``."""
    rng = random.Random(seed)
    words = ["alpha", "needle", "beta", "Needle", "gamma", "nëedle", "delta"]
    files: dict[str, bytes] = {
        ".gitignore": b"*.log\nbuild/\n!keep.log\n/only_top.txt\n",
        "sub/.gitignore": b"local_*\n",
        "bin_early.dat": b"needle\x00binary\n",
        "bin_late.dat": b"needle before\n" + b"x" * 200_000 + b"\x00 late nul\nneedle after\n",
        "long_before.txt": b"needle " + b"y" * 5000 + b"\n",
        "long_after.txt": b"z" * 5000 + b" needle\n",
        "latin1.txt": b"caf\xe9 needle \xff\xfe end\n",
        "crlf.txt": b"needle crlf\r\nsecond needle\r\n",
        "bom.txt": b"\xef\xbb\xbfneedle bom\n",
        "utf16.txt": "needle utf16\n".encode("utf-16"),
        "keep.log": b"needle kept log\n",
        "drop.log": b"needle ignored log\n",
        "build/out.txt": b"needle build\n",
        "only_top.txt": b"needle anchored\n",
        "sub/only_top.txt": b"needle not anchored here\n",
        "sub/local_x.txt": b"needle locally ignored\n",
        ".hidden/h.txt": b"needle hidden\n",
        ".git/config": b"needle git internals\n",
        "noeol.txt": b"last needle",
    }
    for index in range(60):
        lines = [" ".join(rng.choice(words) for _ in range(rng.randint(1, 8))) for _ in range(rng.randint(1, 20))]
        files[f"gen/d{index % 7}/f{index:03d}.{rng.choice(['py', 'txt', 'log'])}"] = "\n".join(lines).encode()
    for rel, data in files.items():
        path = root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(data)
    os.symlink("crlf.txt", root / "link_file.txt")
    os.symlink("sub", root / "link_dir")
    os.symlink("/etc", root / "link_out")


def search(root: Path, **arguments: object) -> dict:
    ctx = ToolContext(workspace=Workspace(root), documents=DiskDocumentStore(root))
    data = REGISTRY.execute("search_files", dict(arguments), ctx).data
    assert data["ok"], data
    return data


@pytest.fixture()
def spawned(monkeypatch: pytest.MonkeyPatch) -> list[list[str]]:
    """The command lines the kept sandbox started (empty when ripgrep ran some other way)."""
    seen: list[list[str]] = []
    original = ReaderSandbox.spawn

    def spawn(self: ReaderSandbox, argv: list[str]) -> SandboxedProcess | None:
        seen.append(argv)
        return original(self, argv)

    monkeypatch.setattr(ReaderSandbox, "spawn", spawn)
    return seen


CASES = [
    pytest.param({"query": "needle"}, id="literal"),
    pytest.param({"query": "n[eë]edle$", "regex": True}, id="regex"),
    pytest.param({"query": "needle", "glob": "*.txt"}, id="glob"),
    pytest.param({"query": "needle", "glob": "!gen/**"}, id="glob-exclude"),
    pytest.param({"query": "needle", "path": "sub"}, id="subdir"),
    pytest.param({"query": "needle", "max_results": 7}, id="capped"),
    pytest.param({"query": "Needle", "path": "gen/d3"}, id="case"),
]


@pytest.mark.parametrize("seed", [1, 2])
@pytest.mark.parametrize("arguments", CASES)
def test_kept_sandbox_gives_what_a_fresh_sandbox_and_bare_ripgrep_give(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, spawned: list[list[str]], seed: int,
        arguments: dict[str, object]) -> None:
    root = tmp_path / "ws"
    root.mkdir()
    generated_tree(root, seed)
    kept = search(root, **arguments)
    assert kept["backend"] == "ripgrep" and len(spawned) == 1, "the kept sandbox did not run this search"
    assert kept["count"] > 0
    paths = {m["path"] for m in kept["matches"]}
    assert not paths & {"bin_early.dat", "drop.log", "build/out.txt", ".git/config", "link_file.txt"}
    with monkeypatch.context() as patch:
        patch.setattr(reader_sandbox, "_sandbox_for", lambda *_args: None)  # a fresh sandbox per search
        fresh = search(root, **arguments)
    assert len(spawned) == 1
    assert kept == fresh
    start = root / str(arguments.get("path", "."))
    assert RG is not None
    bare = rg_search(RG, root, start, str(arguments["query"]), bool(arguments.get("regex", False)),
                     arguments.get("glob"), int(arguments.get("max_results", 100)) + 1)  # type: ignore[arg-type]
    assert kept["matches"] == [m.as_dict() for m in bare][: len(kept["matches"])]


def test_one_sandbox_serves_later_searches_after_its_starting_thread_ended(tmp_path: Path,
                                                                           spawned: list[list[str]]) -> None:
    root = tmp_path / "ws"
    root.mkdir()
    generated_tree(root, 3)
    first: list[dict] = []
    worker = threading.Thread(target=lambda: first.append(search(root, query="needle")))
    worker.start()
    worker.join()
    kept = reader_sandbox._current
    assert kept is not None
    time.sleep(0.3)  # bubblewrap's parent-death signal would have fired by now
    again = search(root, query="needle")
    assert reader_sandbox._current is kept and not kept.dead.is_set()
    assert again == first[0] and len(spawned) == 2


def test_concurrent_searches_share_the_sandbox_and_each_gets_its_own_results(tmp_path: Path) -> None:
    root = tmp_path / "ws"
    root.mkdir()
    generated_tree(root, 4)
    expected = {q: search(root, query=q) for q in ("needle", "alpha", "gamma delta")}
    results: list[tuple[str, dict]] = []

    def worker(query: str) -> None:
        for _ in range(3):
            results.append((query, search(root, query=query)))

    threads = [threading.Thread(target=worker, args=(q,)) for q in expected for _ in range(2)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert len(results) == 18
    assert all(data == expected[query] for query, data in results)


def test_a_hidden_directory_replaced_on_the_host_is_still_not_searched(tmp_path: Path) -> None:
    root = tmp_path / "ws"
    state = root / "state"
    state.mkdir(parents=True)
    (state / "notes.txt").write_text(SECRET + "\n")
    (root / "visible.txt").write_text(SECRET + " visible\n")
    hide_from_commands(state)
    assert [m["path"] for m in search(root, query=SECRET)["matches"]] == ["visible.txt"]
    before = reader_sandbox._current
    # Removed and made again: in the kept sandbox's mount namespace the cover over it is now detached.
    shutil.rmtree(state)
    state.mkdir()
    (state / "notes.txt").write_text(SECRET + "\n")
    assert [m["path"] for m in search(root, query=SECRET)["matches"]] == ["visible.txt"]
    assert reader_sandbox._current is not before, "the stale sandbox was used again"
    # Positive control: unsandboxed, the recreated secret is there to be found.
    assert RG is not None
    assert "state/notes.txt" in {m.path for m in rg_search(RG, root, root, SECRET, False, None, 10)}


def test_a_path_hidden_after_the_sandbox_was_built_is_hidden_from_the_next_search(tmp_path: Path) -> None:
    root = tmp_path / "ws"
    late = root / "late"
    late.mkdir(parents=True)
    (late / "notes.txt").write_text(SECRET + "\n")
    assert [m["path"] for m in search(root, query=SECRET)["matches"]] == ["late/notes.txt"]
    hide_from_commands(late)
    assert search(root, query=SECRET)["matches"] == []


def test_kill_stops_the_program_and_dropping_it_kills_it_too(tmp_path: Path) -> None:
    root = tmp_path / "ws"
    root.mkdir()
    sleep = shutil.which("sleep")
    assert sleep is not None
    wrapped = reader_argv([sleep, "30"], root, fixed_paths(SandboxPolicy()))
    assert wrapped is not None
    proc = start_reader(wrapped, root, {"PATH": "/usr/bin:/bin"})
    assert isinstance(proc, SandboxedProcess) and proc.poll() is None
    began = time.monotonic()
    proc.kill()
    assert proc.wait() == -9 and time.monotonic() - began < 5
    dropped = start_reader(wrapped, root, {"PATH": "/usr/bin:/bin"})
    assert isinstance(dropped, SandboxedProcess)
    dropped._reply.close()  # the host lets go without a word: the spawner must kill it
    assert dropped.stdout is not None
    began = time.monotonic()
    assert dropped.stdout.read() == b""  # EOF: sleep's stdout closed because it died
    assert time.monotonic() - began < 5


def test_an_idle_sandbox_ends_by_itself_and_the_next_search_builds_another(tmp_path: Path,
                                                                           monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(reader_sandbox, "IDLE_S", 0.3)
    monkeypatch.setattr(reader_sandbox, "CHECK_EVERY_S", 0.1)
    root = tmp_path / "ws"
    root.mkdir()
    generated_tree(root, 5)
    first = search(root, query="needle")
    kept = reader_sandbox._current
    assert kept is not None
    assert kept.dead.wait(5), "the idle sandbox's processes are still running"
    assert search(root, query="needle") == first
    assert reader_sandbox._current is not kept
