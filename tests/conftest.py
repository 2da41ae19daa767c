"""Shared fixtures: every test gets its own state dir and config home, never the user's."""

from __future__ import annotations

import logging
from collections.abc import Iterator
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


def _disabled_k1412_loggers() -> list[str]:
    return sorted(name for name, logger in logging.Logger.manager.loggerDict.items()
                  if name.startswith("k1412") and isinstance(logger, logging.Logger) and logger.disabled)


@pytest.fixture(autouse=True)
def k1412_loggers_stay_enabled() -> Iterator[None]:
    """Fail the test that disables K1412's loggers (e.g. a dictConfig() in-process), not a later one that logs."""
    before = set(_disabled_k1412_loggers())
    yield
    newly = [name for name in _disabled_k1412_loggers() if name not in before]
    if newly:
        for name in newly:
            logging.getLogger(name).disabled = False  # the tests after this one log as the product does
        pytest.fail(f"this test disabled K1412's loggers {', '.join(newly)}: their warnings would be lost", pytrace=False)


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
