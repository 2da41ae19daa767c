"""Test integrity: did a change to a test file take away what the tests checked?

The most common way an agent "makes the tests pass" is to bend the tests: an expected value changed to
what the buggy code returns, an assertion deleted, a skip marker added, a test function or file removed.
A passing run after such a change proves nothing about the code. This module compares a test file as it
was when the run started with the file as a change left it, and says what kind of change it was:

- ``intact``: the same text or syntax tree (a change undone, a rewrite that only reformats);
- ``created``: a test file the run made (it was not there when the run started);
- ``added``: only new tests or imports were added — every test function that was there is still there,
  byte for byte in its parsed form, and nothing new runs when the file is imported;
- ``weakened``: an existing test function (or a module-level value or helper the tests use) changed or
  disappeared, a skip/ignore marker or module-level code that runs on import was added;
- ``removed``: the file is gone (deleted or moved out of collection);
- ``unknown``: what the file held before is not known (too many test files to keep), or it cannot be read.

Python is compared by its syntax tree (``ast``), so reformatting that keeps the tree is ``intact`` while any
change to a test's body — even one that looks stronger — is ``weakened``: the gate cannot tell a stronger
assertion from one bent to the bug, so it fails closed. Other languages (JavaScript/TypeScript, Go, Rust,
C/C++, Java …) are compared line by line: any existing line removed or changed, or an added line that skips
or ignores a test, is ``weakened``; pure additions are ``added``.
"""

from __future__ import annotations

import ast
import copy
import difflib
import posixpath
import re
from dataclasses import dataclass

TEST_DIRS = frozenset({"tests", "test", "__tests__", "spec", "specs", "testing"})
_TEST_NAME = re.compile(
    r"^(?:test_.+\.py|.+_test\.(?:py|go|rs|c|cc|cpp)|.+\.(?:test|spec)\.[cm]?[jt]sx?|test_[^.]+\.(?:c|cc|cpp|rs)"
    r"|.+Tests?\.(?:java|kt|cs)|check_.+\.c)$")
_SOURCE_SUFFIXES = frozenset({".py", ".js", ".jsx", ".ts", ".tsx", ".mjs", ".cjs", ".go", ".rs", ".c", ".cc", ".cpp",
                              ".h", ".hpp", ".java", ".kt", ".cs", ".rb", ".sh", ".bats", ".exs", ".php", ".swift"})
# Added lines that switch a test off, in any of the languages compared by lines.
_SKIP_MARKERS = re.compile(
    r"\.(?:skip|only|todo)\s*\(|\b(?:xit|xdescribe|xtest|fit|fdescribe)\s*\(|\bt\.Skip(?:f|Now)?\s*\(|#\[\s*ignore"
    r"|@(?:Disabled|Ignore)\b|\bGTEST_SKIP\b|\bskip\s*\(|\bpending\s*\(|\bSkip\(")
_PY_EXIT = re.compile(r"\b(?:pytest\.skip|pytest\.exit|sys\.exit|os\._exit|unittest\.skip)\b")

CHANGES = ("intact", "added", "created", "weakened", "removed", "unknown")


@dataclass(frozen=True)
class IntegrityFinding:
    """What a change did to one test file, and why (one clause, for the verdict)."""

    path: str
    change: str  # one of CHANGES
    why: str = ""
    how: str = ""  # for ``weakened``: changed (what a test checks), removed, skipped or hooked (code on import)

    @property
    def voids_proof(self) -> bool:
        return self.change in ("weakened", "removed", "unknown")

    def as_fact(self) -> dict[str, str]:
        fact = {"path": self.path, "change": self.change}
        if self.how:
            fact["how"] = self.how
        if self.why:
            fact["why"] = self.why
        return fact


def is_test_path(path: str) -> bool:
    """Whether ``path`` holds tests: a test file name (``test_x.py``, ``x_test.go``, ``x.spec.ts`` …), or a
    source file under a ``tests``/``test``/``__tests__``/``spec`` directory."""
    clean = path.replace("\\", "/").removeprefix("./")
    name = posixpath.basename(clean)
    if _TEST_NAME.match(name):
        return True
    parts = clean.split("/")[:-1]
    return any(p in TEST_DIRS for p in parts) and posixpath.splitext(name)[1] in _SOURCE_SUFFIXES


def compare(path: str, old: str | None, new: str | None) -> IntegrityFinding:
    """What the change from ``old`` (the run's start; None: the file did not exist) to ``new`` (None: it is
    gone) did to the tests in ``path``."""
    if old is None:
        return IntegrityFinding(path, "created", f"{path} is a new test file")
    if new is None:
        return IntegrityFinding(path, "removed", f"{path} was removed, so its tests no longer run", "removed")
    if old == new:
        return IntegrityFinding(path, "intact")
    if path.endswith(".py"):
        return _compare_python(path, old, new)
    return _compare_lines(path, old, new)


# --- Python -------------------------------------------------------------------------------------------------

def _compare_python(path: str, old: str, new: str) -> IntegrityFinding:
    try:
        before = ast.parse(old)
    except SyntaxError:
        return _compare_lines(path, old, new)
    try:
        after = ast.parse(new)
    except SyntaxError:
        return _weakened(path, "changed", f"{path} no longer parses")
    if ast.dump(before) == ast.dump(after):
        return IntegrityFinding(path, "intact")
    old_defs = dict(_definitions(before))
    new_defs = dict(_definitions(after))
    unclaimed = {_shape(node): name for name, node in new_defs.items() if name not in old_defs}
    for name, node in old_defs.items():
        new_node = new_defs.get(name)
        if new_node is None:
            # Renamed with everything it checks intact (a rename across the code and its tests)?
            if unclaimed.pop(_shape(node), None) is not None:
                continue
            what = "test" if _is_test_name(name) else "definition"
            return _weakened(path, "removed", f"the {what} {name} was removed from {path}")
        if ast.dump(node) == ast.dump(new_node) or _shape(node) == _shape(new_node):
            continue
        if _added_skip(node, new_node):
            return _weakened(path, "skipped", f"{name} in {path} was marked to be skipped")
        what = "test" if _is_test_name(name) else "definition the tests use"
        return _weakened(path, "changed", f"what the {what} {name} in {path} checks was changed")
    old_imports = [_import_key(n) for n in before.body if isinstance(n, (ast.Import, ast.ImportFrom))]
    new_imports = [_import_key(n) for n in after.body if isinstance(n, (ast.Import, ast.ImportFrom))]
    for key in old_imports:
        if key not in new_imports:
            return _weakened(path, "changed", f"{path} no longer imports {key} as it did")
    old_top = {_shape(n) for n in before.body if not _is_definition(n) and not _is_import(n)}
    new_top = [n for n in after.body if not _is_definition(n) and not _is_import(n)]
    for node in new_top:
        if _shape(node) not in old_top and not _harmless_module_statement(node):
            text = ast.unparse(node)
            how = "skipped" if _PY_EXIT.search(text) or re.search(r"\bskip", text) else "hooked"
            return _weakened(path, how, f"{path} gained module-level code that runs on import "
                             f"(line {getattr(node, 'lineno', '?')})")
    if old_top - {_shape(n) for n in new_top}:
        return _weakened(path, "changed", f"module-level code of {path} was changed or removed")
    return IntegrityFinding(path, "added", f"tests were added to {path}")


def _weakened(path: str, how: str, why: str) -> IntegrityFinding:
    return IntegrityFinding(path, "weakened", why, how)


class _Anonymous(ast.NodeTransformer):
    """Every name replaced by ``_``: what remains is what a test checks (its structure and its values)."""

    def visit_Name(self, node: ast.Name) -> ast.AST:
        return ast.Name(id="_", ctx=node.ctx)

    def visit_Attribute(self, node: ast.Attribute) -> ast.AST:
        return ast.Attribute(value=self.visit(node.value), attr="_", ctx=node.ctx)

    def visit_alias(self, node: ast.alias) -> ast.AST:
        return ast.alias(name="_", asname=None)

    def visit_arg(self, node: ast.arg) -> ast.AST:
        return ast.arg(arg="_", annotation=None)

    def generic_visit(self, node: ast.AST) -> ast.AST:
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            node.name = "_"
        return super().generic_visit(node)


def _shape(node: ast.AST) -> str:
    return ast.dump(_Anonymous().visit(copy.deepcopy(node)), annotate_fields=False)


def _is_import(node: ast.AST) -> bool:
    return isinstance(node, (ast.Import, ast.ImportFrom))


def _import_key(node: ast.Import | ast.ImportFrom) -> str:
    """An import by what it reaches: the module (names may be added or renamed; the module must stay)."""
    if isinstance(node, ast.ImportFrom):
        return "." * node.level + (node.module or "")
    return ",".join(sorted(a.name for a in node.names))


def _added_skip(old: ast.AST, new: ast.AST) -> bool:
    def markers(node: ast.AST) -> int:
        text = ast.unparse(node)
        return len(re.findall(r"\b(?:skip\w*|xfail|expectedFailure)\b", text)) + len(_PY_EXIT.findall(text))

    return markers(new) > markers(old)


def _definitions(tree: ast.Module) -> list[tuple[str, ast.AST]]:
    """Module-level functions, and classes with each of their methods, by qualified name."""
    found: list[tuple[str, ast.AST]] = []
    for node in tree.body:
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            found.append((node.name, node))
        elif isinstance(node, ast.ClassDef):
            header = ast.ClassDef(name=node.name, bases=node.bases, keywords=node.keywords, body=[],
                                  decorator_list=node.decorator_list, type_params=getattr(node, "type_params", []))
            found.append((node.name, header))
            for item in node.body:
                if isinstance(item, (ast.FunctionDef, ast.AsyncFunctionDef)):
                    found.append((f"{node.name}.{item.name}", item))
                else:
                    found.append((f"{node.name}.<{type(item).__name__}:{getattr(item, 'lineno', 0)}>", item))
    # Class-level statements are compared by position among the class's own statements, so a moved
    # attribute counts as changed; renumber them by order, not line, so an edit above does not shift them.
    counters: dict[str, int] = {}
    renamed: list[tuple[str, ast.AST]] = []
    for name, node in found:
        if ".<" in name:
            cls = name.split(".<", 1)[0]
            counters[cls] = counters.get(cls, 0) + 1
            name = f"{cls}.<statement {counters[cls]}>"
        renamed.append((name, node))
    return renamed


def _is_definition(node: ast.AST) -> bool:
    return isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef))


def _is_test_name(name: str) -> bool:
    last = name.rsplit(".", 1)[-1]
    return last.startswith("test") or last.startswith("Test")


def _harmless_module_statement(node: ast.stmt) -> bool:
    """New module-level statements that run nothing on import: imports, a docstring, ``__all__``, the
    ``if __name__ == "__main__"`` block."""
    if isinstance(node, (ast.Import, ast.ImportFrom)):
        return True
    if isinstance(node, ast.Expr) and isinstance(node.value, ast.Constant) and isinstance(node.value.value, str):
        return True
    if isinstance(node, ast.Assign) and all(isinstance(t, ast.Name) and t.id == "__all__" for t in node.targets):
        return True
    if isinstance(node, ast.If):
        test = ast.unparse(node.test).replace("'", '"')
        return test in ('__name__ == "__main__"', '"__main__" == __name__')
    return False


# --- other languages: lines ---------------------------------------------------------------------------------

_HASH_COMMENTS = frozenset({".py", ".sh", ".bats", ".rb", ".exs", ".pl", ".r", ".toml", ".yaml", ".yml"})


def _meaningful(line: str, suffix: str) -> bool:
    """A line whose removal can change what a test checks: not blank, not a comment."""
    stripped = line.strip()
    if not stripped:
        return False
    comments = ("#",) if suffix in _HASH_COMMENTS else ("//", "/*", "*")
    return not stripped.startswith(comments)


_ASSERTING = re.compile(
    r"\b(?:assert\w*|expect\w*|CHECK\w*|REQUIRE\w*|EXPECT_\w+|ASSERT_\w+|should\w*|toBe\w*|toEqual\w*|toMatch\w*"
    r"|Fail\w*|Error[fF]?|Fatal[fF]?)\b|\b(?:test|it|describe|TEST|TEST_F)\s*\(|#\[test\]|\bfn\s+test|\bfunc\s+Test"
    r"|@Test\b|\breturn\s+(?:1|-1|fails|failures)\b|\bexit\s*\(\s*[1-9]")
_WORD = re.compile(r"[A-Za-z_]\w*")


def _normal(line: str) -> str:
    """A line with every identifier replaced: a rename leaves it as it was."""
    return _WORD.sub("_", line.strip())


def _compare_lines(path: str, old: str, new: str) -> IntegrityFinding:
    suffix = posixpath.splitext(path)[1].lower()
    old_lines, new_lines = old.splitlines(), new.splitlines()
    matcher = difflib.SequenceMatcher(a=old_lines, b=new_lines, autojunk=False)
    for tag, a0, a1, b0, b1 in matcher.get_opcodes():
        if tag in ("replace", "insert"):
            for line in new_lines[b0:b1]:
                if _SKIP_MARKERS.search(line) or _PY_EXIT.search(line):
                    return _weakened(path, "skipped", f"{path} gained a line that skips tests "
                                     f"({line.strip()[:60]!r})")
        if tag not in ("replace", "delete"):
            continue
        gone = [line for line in old_lines[a0:a1] if _meaningful(line, suffix) and _ASSERTING.search(line)]
        if not gone:
            continue  # messages, setup and comments: not what the tests check
        added = {_normal(line) for line in new_lines[b0:b1]}
        missing = [g for g in gone if _normal(g) not in added]
        if not missing:
            continue  # the same checks under new names (a rename)
        how = "changed" if tag == "replace" and any(_ASSERTING.search(x) for x in new_lines[b0:b1]) else "removed"
        return _weakened(path, how, f"{path}: the check on line {a0 + 1} ({missing[0].strip()[:60]!r}) was {how}")
    return IntegrityFinding(path, "added", f"lines were added to {path}")


__all__ = ["CHANGES", "IntegrityFinding", "compare", "is_test_path"]
