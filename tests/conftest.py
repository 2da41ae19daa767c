"""Shared fixtures: every test gets its own state dir and config home, never the user's."""

from __future__ import annotations

from pathlib import Path

import pytest

from k1412_ls.tools.files.documents import DiskDocumentStore
from k1412_ls.tools.files.workspace import Workspace
from k1412_ls.tools.registry import ToolContext

# Fixtures shared by several test files.
pytest_plugins = ["tests.support.file_layout"]

REPO_ROOT = Path(__file__).resolve().parents[1]
SHARED_DIR = REPO_ROOT.parent / "shared"


@pytest.fixture(autouse=True)
def isolated_home(tmp_path_factory: pytest.TempPathFactory, monkeypatch: pytest.MonkeyPatch) -> Path:
    """Point $K1412_HOME and $XDG_CONFIG_HOME at fresh temp dirs; drop any K1412_CONFIG."""
    home = tmp_path_factory.mktemp("k1412-home")
    monkeypatch.setenv("K1412_HOME", str(home / "state"))
    monkeypatch.setenv("XDG_CONFIG_HOME", str(home / "config"))
    monkeypatch.delenv("K1412_CONFIG", raising=False)
    return home / "state"


def write_config(path: Path, base_url: str, *, model: str = "scripted", extra: str = "") -> Path:
    """A TOML config whose default model talks to a scripted server at ``base_url``."""
    path.write_text(
        f'default_model = "{model}"\n'
        f"[providers.test]\n"
        f'base_url = "{base_url}"\n'
        f"timeout_s = 10\n"
        f"max_retries = 0\n"
        f"[models.{model}]\n"
        f'provider = "test"\n'
        f'provider_model = "scripted-model"\n'
        f"thinking = false\n"
        f"max_iterations = 12\n"
        f"{extra}",
        encoding="utf-8",
    )
    return path


@pytest.fixture
def ws(tmp_path: Path) -> Path:
    """An empty workspace directory (``tmp_path/ws``)."""
    path = tmp_path / "ws"
    path.mkdir()
    return path


@pytest.fixture
def ctx(ws: Path) -> ToolContext:
    """A tool context on ``ws`` with the disk document store."""
    return ToolContext(workspace=Workspace(ws), documents=DiskDocumentStore(ws), run_id="r1")
