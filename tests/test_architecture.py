"""The layering rules, enforced."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

PACKAGE = Path(__file__).resolve().parents[1] / "k1412_ls"


def imported_roots(path: Path) -> set[str]:
    tree = ast.parse(path.read_text(encoding="utf-8"))
    roots: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            roots.update(alias.name.split(".")[0] for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            roots.add(node.module.split(".")[0])
    return roots


def modules(folder: str) -> list[Path]:
    return sorted((PACKAGE / folder).rglob("*.py"))


@pytest.mark.parametrize("path", modules("core"), ids=lambda p: p.name)
def test_core_imports_no_sdk_or_lsp(path: Path) -> None:
    assert not imported_roots(path) & {"openai", "pygls", "lsprotocol"}


def test_only_models_imports_openai_and_only_lsp_imports_pygls() -> None:
    for path in PACKAGE.rglob("*.py"):
        roots = imported_roots(path)
        rel = path.relative_to(PACKAGE).as_posix()
        if "openai" in roots:
            assert rel.startswith("models/"), rel
        if roots & {"pygls", "lsprotocol"}:
            assert rel.startswith("lsp/"), rel


def test_shell_model_is_a_leaf_and_the_only_tree_sitter_user() -> None:
    """Guards and gate share one shell parser; it depends on nothing of ours, and nothing else parses bash."""
    for path in PACKAGE.rglob("*.py"):
        rel = path.relative_to(PACKAGE).as_posix()
        tree = ast.parse(path.read_text(encoding="utf-8"))
        imported = {node.module for node in ast.walk(tree) if isinstance(node, ast.ImportFrom) and node.module}
        imported |= {alias.name for node in ast.walk(tree) if isinstance(node, ast.Import) for alias in node.names}
        if rel.startswith("shell/"):
            assert not {m for m in imported if m.startswith("k1412_ls") and not m.startswith("k1412_ls.shell")}, rel
        elif any(m.startswith("tree_sitter") for m in imported):
            raise AssertionError(f"{rel} parses shell itself; use k1412_ls.shell")
        assert "shlex" not in imported, f"{rel} splits shell words with shlex; use k1412_ls.shell"
