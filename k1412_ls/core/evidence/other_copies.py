"""Proof that ran another copy of a changed file: the change was made in one place and checked in another.

A check proves a change only if it could load the changed file. Three facts of a command line show that it
loaded a different copy instead (they are read from the line, never from the answer):

- **a compiler given a namesake**: the line compiles ``vendor/sum.c`` and not the changed ``sum.c``;
- **an import path set elsewhere**: ``PYTHONPATH=build/lib`` (``NODE_PATH=vendor``), assigned literally, names
  no directory holding the changed module, and the module is not in the directory the line runs in (which
  Python and pytest put first): ``src/calc.py`` was changed, ``build/lib/calc.py`` was imported;
- **an inline program that puts a directory first**: ``sys.path.insert(0, 'vendor')`` before importing the
  changed module's name, from any other directory than the module's.

A line whose import path is not literal (``PYTHONPATH=$PWD``) is not judged by this rule.
"""

from __future__ import annotations

import ast
import posixpath

from k1412_ls.core.evidence.invocations import CommandShape

_ROOT_VARIABLES = {"PYTHONPATH": (".py",), "NODE_PATH": (".js", ".cjs", ".mjs")}


def _norm(path: str, cwd: str = ".") -> str:
    joined = path if path.startswith("/") else posixpath.join(cwd, path.removeprefix("./"))
    return posixpath.normpath(joined)


def other_copy(shape: CommandShape, cwd: str, path: str) -> str | None:
    """Why the line ``shape`` (run in ``cwd``) checked another copy of the changed ``path``, or None."""
    target = _norm(path)
    name = posixpath.basename(target)
    for invocation in shape.invocations:
        where = _norm(invocation.cwd, cwd)
        if invocation.role == "build" and invocation.sources:
            sources = [_norm(s, where) for s in invocation.sources]
            namesakes = [s for s in sources if posixpath.basename(s) == name and s != target]
            if namesakes and target not in sources:
                return f"it compiled {namesakes[0]}, not the changed {target}"
    folder = posixpath.dirname(target) or "."
    for variable, value in shape.environment:
        suffixes = _ROOT_VARIABLES.get(variable)
        if suffixes is None or not target.endswith(suffixes) or value is None or not value.strip():
            continue
        roots = [_norm(r, cwd) for r in value.split(":") if r]
        if folder not in roots and folder != _norm(cwd):
            return (f"{variable}={value} puts another directory first, so the {name} it loaded is not the "
                    f"changed {target}")
    if target.endswith(".py"):
        module = name.removesuffix(".py")
        for code in shape.inline_code:
            first = _inserted_first(code)
            if first and module in _imported_names(code) and all(_norm(d, cwd) != folder for d in first):
                return f"the program put {first[0]} first on its import path, so its {module} is not {target}"
    return None


def _inserted_first(code: str) -> list[str]:
    try:
        tree = ast.parse(code)
    except SyntaxError:
        return []
    found: list[str] = []
    for node in ast.walk(tree):
        if (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr == "insert"
                and len(node.args) == 2 and isinstance(node.args[0], ast.Constant) and node.args[0].value == 0
                and isinstance(node.args[1], ast.Constant) and isinstance(node.args[1].value, str)):
            found.append(node.args[1].value)
    return found


def _imported_names(code: str) -> set[str]:
    try:
        tree = ast.parse(code)
    except SyntaxError:
        return set()
    names: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            names.update(a.name.split(".")[-1] for a in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module:
            names.add(node.module.split(".")[-1])
    return names


__all__ = ["other_copy"]
