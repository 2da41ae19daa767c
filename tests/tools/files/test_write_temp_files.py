"""A killed write leaves no temp file in the workspace, and tools never show one.

Writes used to go through ``.k1412-<hex>.tmp`` in the target's directory: a SIGKILL mid-write left
it there (4.5 MB, for ever). Now the content is written to an unnamed file and only named for the
instant of the rename; leftovers (older versions, filesystems without unnamed files) are swept when
a run or the server starts, and list_files, search_files and read_file never show them.
"""

from __future__ import annotations

import os
import random
import shutil
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

from k1412_ls.tools.files import documents
from k1412_ls.tools.files.documents import (
    DiskDocumentStore,
    is_write_temp,
    locked_directory,
    sweep_write_temps,
)
from k1412_ls.tools.files.file_tools import TOOLS as FILE_TOOLS
from k1412_ls.tools.files.search import TOOLS as SEARCH_TOOLS
from k1412_ls.tools.registry import ToolContext, ToolRegistry
from tests.support.cli import config_for, k1412
from tests.support.scripted_server import ScriptedServer

REPO = Path(__file__).resolve().parents[3]
REGISTRY = ToolRegistry([*FILE_TOOLS, *SEARCH_TOOLS])
LEFTOVER = ".k1412-0123456789ab.tmp"

WRITER = """
import sys
from pathlib import Path
from k1412_ls.tools.files.documents import DiskDocumentStore
ws, ready = Path(sys.argv[1]), Path(sys.argv[2])
store = DiskDocumentStore(ws)
bodies = ["a" * 4_500_000 + "\\n", "b" * 4_500_000 + "\\n"]
ready.touch()
n = 0
while True:
    store.write(ws / "sub" / "big.txt", bodies[n % 2])
    n += 1
"""


def kill_writers(tmp_path: Path, ws: Path, kills: int) -> list[str]:
    """SIGKILL a process writing a 4.5 MB file ``kills`` times at random moments; every name left over."""
    (ws / "sub").mkdir(exist_ok=True)
    (ws / "sub" / "big.txt").write_text("a" * 4_500_000 + "\n")
    rng = random.Random(19)
    leftovers: list[str] = []
    for attempt in range(kills):
        ready = tmp_path / f"ready-{attempt}"
        proc = subprocess.Popen([sys.executable, "-c", WRITER, str(ws), str(ready)], cwd=REPO,
                                stderr=subprocess.PIPE)
        deadline = time.monotonic() + 30
        while not ready.exists():
            assert proc.poll() is None, proc.communicate()[1]
            assert time.monotonic() < deadline
            time.sleep(0.002)
        time.sleep(rng.uniform(0.0, 0.12))
        proc.send_signal(signal.SIGKILL)
        proc.wait(30)
        names = sorted(str(p.relative_to(ws)) for p in ws.rglob("*"))
        leftovers.extend(name for name in names if name not in ("sub", "sub/big.txt"))
        content = (ws / "sub" / "big.txt").read_bytes()
        assert content in (b"a" * 4_500_000 + b"\n", b"b" * 4_500_000 + b"\n"), "torn file"
    return leftovers


@pytest.mark.e2e
def test_sigkill_mid_write_leaves_no_temp_file_in_the_workspace(tmp_path: Path, ws: Path) -> None:
    assert kill_writers(tmp_path, ws, 15) == []


@pytest.mark.stress
def test_fifty_sigkills_mid_write_leave_no_temp_file(tmp_path: Path, ws: Path) -> None:
    assert kill_writers(tmp_path, ws, 50) == []


def _ctx(ws: Path) -> ToolContext:
    from k1412_ls.tools.files.workspace import Workspace

    return ToolContext(workspace=Workspace(ws), documents=DiskDocumentStore(ws))


@pytest.fixture
def leftovers(ws: Path) -> list[Path]:
    (ws / "pkg").mkdir()
    (ws / "pkg" / "mod.py").write_text("needle = 1\n")
    made = [ws / LEFTOVER, ws / "pkg" / ".k1412-abcdefabcdef.tmp"]
    for path in made:
        path.write_text("needle = 0  # half of an interrupted write\n")
    return made


def test_list_files_never_shows_a_leftover_temp_file(ws: Path, leftovers: list[Path]) -> None:
    data = REGISTRY.execute("list_files", {"path": ".", "depth": 3}, _ctx(ws)).data
    assert data["ok"]
    assert "k1412-" not in str(data), data


def test_search_files_never_matches_in_a_leftover_temp_file(ws: Path, leftovers: list[Path]) -> None:
    data = REGISTRY.execute("search_files", {"query": "needle", "glob": "*.tmp"}, _ctx(ws)).data
    assert data["ok"] and data["matches"] == [], data
    data = REGISTRY.execute("search_files", {"query": "needle"}, _ctx(ws)).data
    assert [m["path"] for m in data["matches"]] == ["pkg/mod.py"]


@pytest.mark.parametrize("glob", [None, "*.tmp", ".k1412-*"])
def test_both_search_backends_skip_leftover_temp_files(ws: Path, leftovers: list[Path], glob: str | None) -> None:
    from k1412_ls.tools.files.search import python_search, rg_search

    found = [m.path for m in python_search(ws, ws, "needle", False, glob, 100)]
    assert all("k1412-" not in path for path in found), found
    rg = shutil.which("rg")
    if rg is not None:
        assert [m.path for m in rg_search(rg, ws, ws, "needle", False, glob, 100)] == found


def test_read_file_refuses_a_leftover_temp_file(ws: Path, leftovers: list[Path]) -> None:
    data = REGISTRY.execute("read_file", {"path": f"pkg/{leftovers[1].name}"}, _ctx(ws)).data
    assert not data["ok"] and "unfinished K1412 write" in data["error"] and "\n" not in data["error"]


def test_the_temp_name_pattern_is_exact() -> None:
    assert is_write_temp(LEFTOVER)
    assert not is_write_temp("notes.k1412-0123456789ab.tmp")
    assert not is_write_temp(".k1412-0123456789ab.tmp.bak")
    assert not is_write_temp(".k1412-config.tmp")


@pytest.mark.e2e
def test_a_run_start_sweeps_leftover_temp_files(tmp_path: Path, ws: Path, leftovers: list[Path]) -> None:
    with ScriptedServer([{"content": "Nothing to do.", "repeat": True}]) as server:
        run = k1412("run", "say hello", "--config", str(config_for(tmp_path, server.base_url)), "--json", cwd=ws)
    assert run.code in (0, 3), run.stderr
    assert not any(path.exists() for path in leftovers)
    assert (ws / "pkg" / "mod.py").exists()


@pytest.mark.e2e
async def test_the_language_server_sweeps_leftover_temp_files_at_start(tmp_path: Path) -> None:
    from tests.support.lsp_client import lsp_session, wait_until

    root = tmp_path / "ws"
    root.mkdir()
    leftover = root / LEFTOVER
    leftover.write_text("half")
    async with lsp_session(tmp_path):
        await wait_until(lambda: not leftover.exists())


def test_the_sweep_leaves_a_write_under_way_alone(ws: Path) -> None:
    live = ws / LEFTOVER
    live.write_text("being written")
    fd = os.open(ws, os.O_RDONLY | os.O_DIRECTORY)
    try:
        with locked_directory(fd) as locked:
            assert locked
            assert sweep_write_temps(ws) == 0
            assert live.exists()
    finally:
        os.close(fd)
    assert sweep_write_temps(ws) == 1 and not live.exists()


def test_writes_without_unnamed_files_still_leave_nothing_behind(ws: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(documents, "_open_unnamed", lambda dir_fd: None)
    target = ws / "run.sh"
    target.write_text("old\n")
    target.chmod(0o755)
    DiskDocumentStore(ws).write(target, "new\n")
    assert target.read_text() == "new\n" and target.stat().st_mode & 0o777 == 0o755
    assert [p.name for p in ws.iterdir()] == ["run.sh"]


def test_a_write_that_fails_after_staging_leaves_nothing_behind(ws: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    target = ws / "a.txt"
    target.write_text("old\n")

    def broken_replace(*args: object, **kwargs: object) -> None:
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(documents.os, "replace", broken_replace)
    with pytest.raises(documents.ToolError, match="disk is full"):
        DiskDocumentStore(ws).write(target, "new\n")
    assert target.read_text() == "old\n" and [p.name for p in ws.iterdir()] == ["a.txt"]


def test_concurrent_writes_in_one_directory_take_turns(ws: Path) -> None:
    store = DiskDocumentStore(ws)
    errors: list[BaseException] = []

    def writer(name: str) -> None:
        try:
            for i in range(20):
                store.write(ws / name, f"{name} {i}\n" * 1000)
        except BaseException as exc:  # pragma: no cover - reported below
            errors.append(exc)

    threads = [threading.Thread(target=writer, args=(f"f{i}.txt",)) for i in range(4)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(30)
    assert errors == []
    assert sorted(p.name for p in ws.iterdir()) == ["f0.txt", "f1.txt", "f2.txt", "f3.txt"]
