"""K1412's host processes never import code from the workspace (blind escape round 7, class ``pyshadow``).

``python -m …`` puts the working directory first on ``sys.path``. Started in a workspace (``k1412 undo`` by a
user, ``python -m k1412_ls lsp`` by an editor in the project folder), K1412 would import a ``gettext.py`` a
command planted there: unsandboxed, with the provider key in its environment. Each defence has a control that
shows the planted module imported without it.
"""

from __future__ import annotations

import ast
import os
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[3]
PLANTED_GETTEXT = (
    "import os\n"
    "open(os.environ['K1412_TEST_MARKER'], 'a').write('planted gettext imported\\n')\n"
    "def gettext(s):\n    return s\n"
    "def ngettext(s, p, n):\n    return s if n == 1 else p\n"
)


def _python(cwd: Path, *args: str, safe: bool = False) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if k != "PYTHONSAFEPATH"}
    env.update(PYTHONPATH=str(REPO), K1412_TEST_MARKER=str(cwd.parent / "marker"), K1412_HOME=str(cwd.parent / "state"))
    if safe:
        env["PYTHONSAFEPATH"] = "1"
    return subprocess.run([sys.executable, *args], cwd=cwd, env=env, capture_output=True, text=True, timeout=120)


@pytest.fixture
def planted(tmp_path: Path) -> Path:
    ws = tmp_path / "ws"
    ws.mkdir()
    (ws / "gettext.py").write_text(PLANTED_GETTEXT)
    return ws


@pytest.mark.parametrize("module", ["k1412_ls.cli", "k1412_ls"])
def test_python_m_k1412_in_a_workspace_does_not_import_a_planted_module(planted: Path, module: str) -> None:
    done = _python(planted, "-m", module, "--version")
    assert done.returncode == 0 and "k1412" in done.stdout, done.stderr
    assert not (planted.parent / "marker").exists(), "K1412 imported gettext.py from the working directory"


def test_control_python_m_in_the_same_directory_imports_the_planted_module(planted: Path) -> None:
    """Positive control: a standard-library program started the same way (argparse imports gettext) does."""
    done = _python(planted, "-m", "json.tool", "--help")
    assert done.returncode == 0, done.stderr
    assert "planted gettext imported" in (planted.parent / "marker").read_text()


def test_a_checkout_of_k1412_keeps_its_own_directory_on_the_path(tmp_path: Path) -> None:
    """Started in the directory K1412 itself was loaded from (its own repository), nothing is dropped."""
    done = subprocess.run([sys.executable, "-m", "k1412_ls.cli", "--version"], cwd=REPO, capture_output=True,
                          text=True, timeout=120, env={**os.environ, "PYTHONPATH": ""})
    assert done.returncode == 0 and "k1412" in done.stdout, done.stderr


def test_a_planted_k1412_package_needs_safe_path_which_the_editors_set(tmp_path: Path) -> None:
    """A planted ``k1412_ls`` package loads instead of K1412, before any K1412 code: only ``-P`` /
    ``PYTHONSAFEPATH=1`` (what the editor integrations set) keeps it out. Control: without it, it runs."""
    ws = tmp_path / "ws"
    (ws / "k1412_ls").mkdir(parents=True)
    (ws / "k1412_ls" / "__init__.py").write_text(
        "import os\nopen(os.environ['K1412_TEST_MARKER'], 'a').write('planted package ran\\n')\n")
    safe = _python(ws, "-m", "k1412_ls.cli", "--version", safe=True)
    assert safe.returncode == 0 and "k1412" in safe.stdout and not (tmp_path / "marker").exists(), safe.stderr
    _python(ws, "-m", "k1412_ls.cli", "--version")
    assert "planted package ran" in (tmp_path / "marker").read_text()


def test_the_editors_start_the_server_with_safe_path() -> None:
    nvim = (REPO / "editors" / "nvim" / "lua" / "k1412" / "config.lua").read_text(encoding="utf-8")
    assert "cmd_env = { PYTHONSAFEPATH = '1' }" in nvim
    client = (REPO / "editors" / "vscode" / "src" / "client.ts").read_text(encoding="utf-8")
    assert "serverEnvironment(process.env)" in client and "options: { cwd, env }" in client
    args = (REPO / "editors" / "vscode" / "src" / "args.ts").read_text(encoding="utf-8")
    assert "env.PYTHONSAFEPATH = '1'" in args


def test_every_python_k1412_starts_itself_ignores_the_working_directory() -> None:
    """Each ``[sys.executable, …]`` K1412 spawns runs with ``-I`` (isolated) or ``-P`` (safe path)."""
    found = []
    for path in (REPO / "k1412_ls").rglob("*.py"):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.List) and node.elts and ast.unparse(node.elts[0]) == "sys.executable":
                flags = [e.value for e in node.elts[1:3] if isinstance(e, ast.Constant)]
                found.append((path.name, flags))
    assert found, "no interpreter spawn found: the scan is broken"
    assert all("-I" in flags or "-P" in flags for _, flags in found), found
