"""Shared layout for the file-gateway security tests: a workspace beside an outside dir and ``ws-evil``."""

from __future__ import annotations

from pathlib import Path

import pytest

from k1412_ls.tools.files.documents import DiskDocumentStore
from k1412_ls.tools.files.file_tools import TOOLS as FILE_TOOLS
from k1412_ls.tools.files.patching import TOOLS as PATCH_TOOLS
from k1412_ls.tools.files.search import TOOLS as SEARCH_TOOLS
from k1412_ls.tools.files.workspace import Workspace
from k1412_ls.tools.registry import ToolContext, ToolRegistry

REGISTRY = ToolRegistry([*FILE_TOOLS, *PATCH_TOOLS, *SEARCH_TOOLS])
SECRET = "TOP-SECRET-OUTSIDE\n"


@pytest.fixture()
def layout(tmp_path: Path) -> dict[str, Path]:
    """A workspace ``ws`` next to an ``outside`` dir and a sibling-prefix ``ws-evil`` dir."""
    ws = tmp_path / "ws"
    outside = tmp_path / "outside"
    evil = tmp_path / "ws-evil"
    for directory in (ws, outside / "deep", evil):
        directory.mkdir(parents=True)
    (outside / "secret.txt").write_text(SECRET)
    (evil / "secret.txt").write_text(SECRET)
    (ws / "inside.txt").write_text("inside\n")
    (ws / ".git" / "hooks").mkdir(parents=True)
    (ws / ".git" / "config").write_text("[core]\n")
    return {"ws": ws, "outside": outside, "evil": evil, "tmp": tmp_path}


def make_ctx(ws: Path) -> ToolContext:
    return ToolContext(workspace=Workspace(ws), documents=DiskDocumentStore(ws), run_id="sec")


def snapshot_outside(tmp: Path, ws: Path) -> dict[str, bytes]:
    """Every file outside the workspace under tmp, with its bytes."""
    found: dict[str, bytes] = {}
    for path in sorted(tmp.rglob("*")):
        if path.is_relative_to(ws) or path.is_symlink() or not path.is_file():
            continue
        found[str(path)] = path.read_bytes()
    return found


def assert_one_sentence(error: str) -> None:
    assert "\n" not in error and error.endswith("."), error
    assert "Traceback" not in error
