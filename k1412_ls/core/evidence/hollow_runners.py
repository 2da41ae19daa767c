"""Test runners that run no test, read from the workspace when the run starts (recorded, so a replay agrees).

A green status proves tests passed only if the runner ran some. Two shapes run none, whatever they print:

- **a test module run as a script** (``python3 test_calc.py``) whose top level only imports and defines —
  no ``if __name__ == "__main__":``, no call, no assert: its ``test_*`` functions are defined and never run;
- **a project test command whose recipe only prints**: a ``make test``/``make check`` target whose every
  recipe line is ``echo``/``printf``/``true``, a ``package.json`` ``test`` script that only echoes.

Such a run's pass is ``none`` (no test ran). Files the run itself changed are judged by the other rules.
"""

from __future__ import annotations

import ast
import json
import re
from pathlib import Path

from k1412_ls.core.evidence.invocations import command_shape

MAX_PROBED_BYTES = 256_000
_MAKEFILES = ("GNUmakefile", "makefile", "Makefile")
_TEST_TARGETS = ("test", "check", "tests")


def hollow_runners(root: Path, test_files: tuple[str, ...] | None) -> tuple[str, ...]:
    """Suite families (``file:test_calc.py``, ``script:make test``, ``script:npm test``) that run no test."""
    found: list[str] = []
    for rel in test_files or ():
        if rel.endswith(".py") and _defines_tests_only(_text(root / rel)):
            found.append(f"file:{rel}")
    for name in _MAKEFILES:
        text = _text(root / name)
        if text:
            found += [f"script:make {t}" for t in _TEST_TARGETS if _recipe_only_prints(text, t)]
            break
    scripts = _package_scripts(_text(root / "package.json"))
    test_script = scripts.get("test")
    if isinstance(test_script, str) and _only_prints(test_script):
        found += ["script:npm test", "script:yarn test", "script:pnpm test", "script:bun test"]
    return tuple(found)


def _text(path: Path) -> str:
    try:
        if path.is_file() and path.stat().st_size <= MAX_PROBED_BYTES:
            return path.read_text(encoding="utf-8", errors="replace")
    except OSError:
        pass
    return ""


def _defines_tests_only(code: str) -> bool:
    """A module with ``test_*`` functions or ``Test*`` classes whose top level runs nothing but definitions."""
    if not code:
        return False
    try:
        tree = ast.parse(code)
    except SyntaxError:
        return False
    defines = any((isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef)) and n.name.startswith("test"))
                  or (isinstance(n, ast.ClassDef) and n.name.startswith("Test")) for n in tree.body)
    quiet = all(isinstance(n, (ast.Import, ast.ImportFrom, ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef))
                or (isinstance(n, ast.Expr) and isinstance(n.value, ast.Constant))
                or (isinstance(n, ast.Assign) and isinstance(n.value, ast.Constant)) for n in tree.body)
    return defines and quiet


def _recipe_only_prints(makefile: str, target: str) -> bool:
    lines = makefile.splitlines()
    head = re.compile(rf"^{re.escape(target)}\s*:(?!=)")
    for index, line in enumerate(lines):
        if head.match(line):
            prerequisites = line.split(":", 1)[1].split("#", 1)[0].split(";", 1)
            if prerequisites[0].strip():
                return False  # it builds or runs other targets first
            recipe = [prerequisites[1]] if len(prerequisites) > 1 and prerequisites[1].strip() else []
            for follow in lines[index + 1:]:
                if not follow.startswith("\t"):
                    if follow.strip() and not follow.lstrip().startswith("#"):
                        break
                    continue
                recipe.append(follow[1:])
            return bool(recipe) and all(_only_prints(r.lstrip("@-+ ")) for r in recipe)
    return False


def _only_prints(command: str) -> bool:
    if "$(" in command or "`" in command:
        return False
    shape = command_shape(command)
    return bool(shape.invocations) and shape.parsed and all(
        i.role == "print" or i.program in ("true", ":") for i in shape.invocations)


def _package_scripts(text: str) -> dict[str, object]:
    if not text:
        return {}
    try:
        data = json.loads(text)
    except ValueError:
        return {}
    scripts = data.get("scripts") if isinstance(data, dict) else None
    return scripts if isinstance(scripts, dict) else {}


__all__ = ["hollow_runners"]
