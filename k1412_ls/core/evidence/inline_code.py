"""What a program given inline does (``python3 -c``, a here-document, ``node -e``), judged from its code.

A program that only prints constants proves nothing (it is printed text); one that imports a module and
prints names without calling anything checks nothing either. Anything else runs code. The workspace files an
inline program loads (``from calc import add``, ``require('./lib/price.js')``) are what it exercises: a probe
that calls ``add(2, 3)`` has read ``calc.py`` through its behaviour.
"""

from __future__ import annotations

import ast
import re
from functools import lru_cache

_PRINT_CALLS = frozenset({"print", "exit", "quit", "sys.exit", "sys.stdout.write", "sys.stderr.write",
                          "os._exit", "pprint", "pprint.pprint", "json.dumps", "str", "len", "repr", "format"})


@lru_cache(maxsize=256)
def python_prints_only(code: str) -> bool:
    """Whether a Python program only prints constants and exits (imports of sys/os/json allowed)."""
    try:
        tree = ast.parse(code)
    except SyntaxError:
        return False
    for node in ast.walk(tree):
        if isinstance(node, ast.Call):
            name = _call_name(node.func)
            if name not in _PRINT_CALLS:
                return False
        elif isinstance(node, (ast.Import, ast.ImportFrom)):
            modules = [a.name for a in node.names] if isinstance(node, ast.Import) else [node.module or ""]
            if any(m.split(".")[0] not in ("sys", "os", "json", "pprint", "time") for m in modules):
                return False
        elif isinstance(node, (ast.With, ast.Try, ast.Lambda, ast.FunctionDef, ast.ClassDef, ast.Subscript,
                               ast.Attribute)) and not _benign_attribute(node):
            return False
    return True


def _benign_attribute(node: ast.AST) -> bool:
    return isinstance(node, ast.Attribute) and _call_name(node) in _PRINT_CALLS | {"sys", "sys.stdout", "sys.stderr",
                                                                                   "os", "pprint"}


def _call_name(func: ast.AST) -> str:
    if isinstance(func, ast.Name):
        return func.id
    if isinstance(func, ast.Attribute):
        return f"{_call_name(func.value)}.{func.attr}"
    return "?"


JS_PRINT_ONLY = re.compile(r"^\s*(?:(?:console\.(?:log|error|info)|process\.stdout\.write)\s*\(\s*(?:'[^']*'|\"[^\"]*\"|`[^`$]*`)"
                            r"\s*\)\s*;?\s*|process\.exit\s*\(\s*\d*\s*\)\s*;?\s*)+$")


@lru_cache(maxsize=256)
def python_exercises(code: str) -> bool:
    """Whether a Python program calls something besides printing, or asserts (an import alone checks nothing)."""
    try:
        tree = ast.parse(code)
    except SyntaxError:
        return True  # unknown: let its status speak
    for node in ast.walk(tree):
        if isinstance(node, ast.Assert):
            return True
        if isinstance(node, ast.Call) and _call_name(node.func) not in _PRINT_CALLS:
            return True
    return False


_JS_LOADS = re.compile(r"""(?:\brequire\s*\(\s*|\bimport\s*\(\s*|\bfrom\s+|\bimport\s+)(['"])(\.{1,2}/[^'"\s]+)\1""")


@lru_cache(maxsize=256)
def imported_files(language: str, code: str) -> tuple[str, ...]:
    """Workspace-relative files an inline program loads: Python modules it imports (``a.b`` as ``a/b.py`` and
    ``a/b/__init__.py``), relative paths a JavaScript program requires or imports (``.js`` added when bare)."""
    found: list[str] = []
    if language.startswith(("python", "pypy")):
        try:
            tree = ast.parse(code)
        except SyntaxError:
            return ()
        for node in ast.walk(tree):
            names = [a.name for a in node.names] if isinstance(node, ast.Import) else (
                [node.module] if isinstance(node, ast.ImportFrom) and node.module and not node.level else [])
            for name in names:
                base = name.replace(".", "/")
                found += [f"{base}.py", f"{base}/__init__.py"]
    elif language in ("node", "nodejs", "deno", "bun"):
        for match in _JS_LOADS.finditer(code):
            path = match.group(2).removeprefix("./")
            found.append(path if re.search(r"\.[cm]?[jt]sx?$|\.json$", path) else f"{path}.js")
    return tuple(dict.fromkeys(found))
