"""Runner configuration a run changed: can the change narrow what a later pytest run selects?

pytest reads its selection from files as well as from its command line: ``addopts``, ``testpaths``,
``python_files``, ``norecursedirs`` … in ``pytest.ini``, ``.pytest.ini``, ``tox.ini`` (``[pytest]``),
``setup.cfg`` (``[tool:pytest]``), ``pyproject.toml`` (``[tool.pytest.ini_options]``), and code in any
``conftest.py`` (``collect_ignore``, hooks, autouse fixtures that skip). The log never holds a written
file's text, so a change is judged by what the log shows of it:

- a change made by a command line whose only writers of that file print literal text into it
  (``printf '…' > pytest.ini``, ``cat >> conftest.py <<'EOF'``) is judged by that text: it is harmless when
  it sets only harmless ini keys (``markers``, ``filterwarnings`` …) or, for ``conftest.py``, defines
  fixtures and helpers without hooks, ``collect_ignore``, ``pytestmark``, ``autouse``, skips or exits;
  keys outside pytest's sections of ``tox.ini``/``setup.cfg``/``pyproject.toml`` (dependencies, the
  version) never matter;
- any other change (a file tool's write, ``sed -i``, a script, a deletion of an ini file, text built
  from expansions) cannot be judged: it counts as one that can narrow.

:func:`narrowing_change` names the reason, or returns None for a harmless change.
"""

from __future__ import annotations

import ast
import posixpath
import re

from k1412_ls.core.evidence.invocations import classify
from k1412_ls.shell import Simple, parse_line
from k1412_ls.text.runner_summaries import HARMLESS_INI

PYTEST_CONFIG_FILES = frozenset({"pytest.ini", ".pytest.ini", "tox.ini", "setup.cfg", "pyproject.toml",
                                 "conftest.py"})
_ONLY_PYTEST = frozenset({"pytest.ini", ".pytest.ini"})  # every key in them is pytest's
# Keys that select tests, wherever an appended text's section is unknown.
_SELECTING = frozenset({"addopts", "testpaths", "python_files", "python_classes", "python_functions",
                        "norecursedirs", "pythonpath", "confcutdir", "rootdir", "consider_namespace_packages",
                        "usefixtures", "collect_imported_tests", "required_plugins"})
_HEADER = re.compile(r"^\s*\[+\s*([^\]]+?)\s*\]+\s*$")
_KEY = re.compile(r"^([A-Za-z_][\w.\-\"']*)\s*[=:]")
# Names a conftest.py may not use for its change to count as harmless.
_CONFTEST_DENIED = frozenset({"collect_ignore", "collect_ignore_glob", "pytestmark", "pytest_plugins", "autouse",
                              "skip", "skipif", "xfail", "exit", "_exit", "abort", "kill", "importorskip",
                              "exec", "eval", "compile", "__import__", "setattr", "__builtins__", "builtins",
                              "modules", "main", "deselect"})
_READERS = frozenset({"cat", "head", "tail", "grep", "ls", "wc", "stat", "diff", "less", "more", "file", "test", "[",
                      "[["})
_EXPANSION = re.compile(r"\$[A-Za-z_{(]|`")


def is_pytest_config(path: str) -> bool:
    return posixpath.basename(path) in PYTEST_CONFIG_FILES


def narrowing_change(path: str, action: str, by_command: bool, command: str | None, tool: str) -> str | None:
    """Why the change of ``path`` can narrow what pytest selects, or None when the log shows it cannot."""
    name = posixpath.basename(path)
    if action == "delete":
        if name == "conftest.py":
            return None  # without it nothing is ignored or hooked any more
        return f"{path} was deleted, so pytest may read its selection from another file"
    if not by_command or command is None:
        return f"{path} was changed by {tool}, and the log does not show its content"
    text = _printed_into(command, name)
    if text is None:
        return f"{path} was changed by `{_short(command)}`, whose content the log cannot tell"
    why = text_narrows(name, text)
    return f"{path} was changed by `{_short(command)}` and {why}" if why else None


def _short(command: str) -> str:
    first = command.strip().splitlines()[0] if command.strip() else ""
    return first if len(first) <= 60 and first == command.strip() else first[:60] + " …"


def _printed_into(command: str, name: str) -> str | None:
    """The literal text a line printed into the file named ``name``; None when anything else could write it."""
    line = parse_line(command)
    if not line.parsed or line.tampered:
        return None
    texts: list[str] = []
    for simple in line.commands:
        invocation = classify(simple)
        targets = [t for t in simple.writes_to if posixpath.basename(t) == name]
        if targets:
            text = _literal_output(simple, invocation.program) if invocation.role == "print" else None
            if text is None:
                return None
            texts.append(text)
        elif any(name in (w or "") for w in simple.words) and invocation.role != "test" \
                and invocation.program not in _READERS:
            return None  # ``sed -i … conftest.py``, ``cp x pytest.ini``, ``tee -a setup.cfg``
        elif invocation.role in ("run", "inline", "build", "setup", "vcs"):
            return None  # a program that could have written it
    return "\n".join(texts) if texts else None


def _literal_output(simple: Simple, program: str) -> str | None:
    if simple.dynamic:
        return None
    if simple.heredoc is not None or simple.herestring is not None:
        text = simple.heredoc if simple.heredoc is not None else simple.herestring or ""
        return None if _EXPANSION.search(text) else text
    args = simple.argv[1:]
    if program == "printf":
        return _unescape(" ".join(args))
    if program == "echo":
        words = [a for a in args if a not in ("-e", "-n", "-E", "-ne", "-en")]
        return _unescape(" ".join(words))
    return None


def _unescape(text: str) -> str:
    try:
        return text.encode("latin-1", "backslashreplace").decode("unicode_escape")
    except (UnicodeDecodeError, UnicodeEncodeError):
        return text


def text_narrows(name: str, text: str) -> str | None:
    """Why ``text`` written into the file ``name`` can narrow pytest's selection, or None."""
    if name == "conftest.py":
        return _conftest_narrows(text)
    section: str | None = None
    for raw in text.splitlines():
        line = raw.split("#", 1)[0].split(";", 1)[0] if not raw.lstrip().startswith(("#", ";")) else ""
        header = _HEADER.match(line)
        if header:
            section = header.group(1).strip().strip("\"'")
            continue
        key_match = _KEY.match(line.strip()) if line[:1] not in (" ", "\t") else None
        if not key_match:
            continue
        key = key_match.group(1).strip("\"'")
        if "pytest" in key.lower():
            return f"sets {key}"
        in_pytest = name in _ONLY_PYTEST or (section is not None and "pytest" in section.lower())
        if in_pytest and key not in HARMLESS_INI:
            return f"sets {key} for pytest"
        if section is None and key in _SELECTING:
            return f"sets {key} where pytest may read it"
    return None


def _conftest_narrows(text: str) -> str | None:
    try:
        tree = ast.parse(text)
    except (SyntaxError, ValueError):
        return "its text is not a complete Python module the gate can read"
    for node in ast.walk(tree):
        name = None
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) and node.name.startswith("pytest_"):
            return f"defines the hook {node.name}"
        if isinstance(node, ast.Name):
            name = node.id
        elif isinstance(node, ast.Attribute):
            name = node.attr
        elif isinstance(node, ast.keyword):
            name = node.arg
        elif isinstance(node, (ast.Import, ast.ImportFrom)):
            names = [a.asname or a.name for a in node.names]
            name = next((n for n in names if n.split(".")[-1] in _CONFTEST_DENIED), None)
        if name is not None and name.split(".")[-1] in _CONFTEST_DENIED:
            return f"uses {name}, which can change which tests run or how they end"
    return None
