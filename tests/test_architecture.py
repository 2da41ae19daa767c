"""The layering rules, enforced.

The layers themselves are import-linter contracts in pyproject.toml ([tool.importlinter]; the picture is
in docs/architecture.md); these tests run them, look for import cycles between modules, and keep the
rules import-linter cannot say.
"""

from __future__ import annotations

import ast
import os
import subprocess
import sys
from collections import Counter
from pathlib import Path

import grimp
import pytest

ROOT = Path(__file__).resolve().parents[1]
PACKAGE = ROOT / "k1412_ls"


# In a child process: import-linter's lint_imports() calls logging.config.dictConfig() without
# disable_existing_loggers=False, which disables every logger that exists by then (k1412.mcp, k1412.config …)
# for the rest of the pytest process, and it puts the working directory on sys.path.
_LINT = ("import sys; from importlinter.cli import lint_imports; "
         "sys.exit(lint_imports(config_filename=sys.argv[1], no_cache=True, no_logo=True))")


def test_the_layer_contracts_hold() -> None:
    """Adapters on top, then assembly, core, tools, leaf utilities; nothing imports upwards."""
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(filter(None, [str(ROOT), os.environ.get("PYTHONPATH")]))}
    done = subprocess.run([sys.executable, "-c", _LINT, str(ROOT / "pyproject.toml")], cwd=ROOT, env=env,
                          capture_output=True, text=True, timeout=600, check=False)
    assert done.returncode == 0, done.stdout + done.stderr


def _cycles(edges: dict[str, set[str]]) -> list[list[str]]:
    """Strongly connected groups of more than one module (Tarjan, iterative)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []
    for start in sorted(edges):
        if start in index:
            continue
        work = [(start, iter(sorted(edges[start])))]
        index[start] = low[start] = len(index)
        stack.append(start)
        on_stack.add(start)
        while work:
            node, children = work[-1]
            child = next(children, None)
            if child is not None:
                if child not in index:
                    index[child] = low[child] = len(index)
                    stack.append(child)
                    on_stack.add(child)
                    work.append((child, iter(sorted(edges.get(child, ())))))
                elif child in on_stack:
                    low[node] = min(low[node], index[child])
                continue
            work.pop()
            if work:
                low[work[-1][0]] = min(low[work[-1][0]], low[node])
            if low[node] == index[node]:
                group = []
                while True:
                    member = stack.pop()
                    on_stack.discard(member)
                    group.append(member)
                    if member == node:
                        break
                if len(group) > 1:
                    found.append(sorted(group))
    return found


def test_cycle_finder_finds_a_cycle() -> None:
    """The positive control: a two-module loop and a three-module loop are reported, a chain is not."""
    edges = {"a": {"b"}, "b": {"a"}, "c": {"d"}, "d": {"e"}, "e": {"c"}, "f": {"a"}}
    assert sorted(_cycles(edges)) == [["a", "b"], ["c", "d", "e"]]
    assert _cycles({"a": {"b"}, "b": {"c"}, "c": set()}) == []


def test_no_module_imports_itself_through_others() -> None:
    """No import cycle between modules, counting imports inside functions and under TYPE_CHECKING."""
    sys.path.insert(0, str(ROOT))
    try:
        graph = grimp.build_graph("k1412_ls", cache_dir=None)
    finally:
        sys.path.remove(str(ROOT))
    edges = {module: set(graph.find_modules_directly_imported_by(module)) for module in graph.modules}
    assert _cycles(edges) == []


def test_modules_are_named_once() -> None:
    """No two modules share a file name in different packages (one name, one role)."""
    names = Counter(p.name for p in PACKAGE.rglob("*.py") if p.name not in {"__init__.py", "__main__.py"})
    assert sorted(name for name, count in names.items() if count > 1) == []


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


# Test folders that hold suites of their own rather than one package's tests.
SUITE_FOLDERS = {"support", "escape", "gate_suite", "vscode_e2e", "editors"}


def test_test_folders_mirror_the_source() -> None:
    """Every test folder (but the suites and support) is named after a package of k1412_ls at the same path."""
    tests = ROOT / "tests"
    folders = [p for p in tests.rglob("*") if p.is_dir() and p.name != "__pycache__"]
    stray = [str(p.relative_to(tests)) for p in folders
             if p.relative_to(tests).parts[0] not in SUITE_FOLDERS
             and not (PACKAGE / p.relative_to(tests)).is_dir()]
    assert stray == []
