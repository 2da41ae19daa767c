"""Where a test invocation runs and what its environment adds to its arguments.

``cd``/``pushd`` are followed by ``commands``; this module adds the directories wrappers and runners
move a suite to (``env -C DIR``, ``sudo -D DIR``, ``uv run --directory DIR``, ``make -C DIR test``,
``npm --prefix DIR test``, ``go -C DIR test``, ``cargo test --manifest-path DIR/Cargo.toml``) and the
variables that change what a runner selects (``PYTEST_ADDOPTS`` read as extra arguments,
``PYTEST_PLUGINS``, ``GOFLAGS``). A directory that comes from an expansion is :data:`UNKNOWN_DIR`, which
is never the workspace's suite.
"""

from __future__ import annotations

import posixpath
import re
from dataclasses import replace

from k1412_ls.shell import Simple, strip_wrappers
from k1412_ls.text.runner_summaries import Suite, with_addopts

UNKNOWN_DIR = "<a directory only known when the line runs>"  # ``cd "$D"``, ``env -C "$D"``
_ENV_WORD = re.compile(r"^([A-Za-z_][A-Za-z0-9_]*)=(.*)$", re.DOTALL)
# Runner options that run the suite of another directory: ``make -C DIR test``, ``npm --prefix DIR test`` ….
RUNNER_DIR_OPTIONS: dict[str, tuple[str, ...]] = {
    "make": ("-C", "--directory"), "npm": ("--prefix", "-C"), "pnpm": ("-C", "--dir"), "yarn": ("--cwd",),
    "bun": ("--cwd",), "go": ("-C",), "cargo": ("--manifest-path", "-C"), "just": ("-d", "--working-directory"),
}


_MAKE_VALUE_OPTIONS = frozenset({"-C", "-f", "--directory", "--file", "--makefile", "-j", "--jobs", "-l", "-o",
                                 "-W", "-I", "-d", "--working-directory", "--justfile"})


def make_positionals(args: list[str]) -> list[str]:
    """``make``/``just`` words that are targets (option values skipped: ``make -C dir test`` → ``test``)."""
    found: list[str] = []
    skip = False
    for arg in args:
        if skip:
            skip = False
        elif arg in _MAKE_VALUE_OPTIONS:
            skip = True
        elif not arg.startswith("-"):
            found.append(arg)
    return found


def without_dir_options(program: str, args: list[str]) -> list[str]:
    """``args`` without the runner's directory options and their values (``npm --prefix DIR test`` → ``test``)."""
    options = RUNNER_DIR_OPTIONS[program]
    kept: list[str] = []
    skip = False
    for arg in args:
        if skip:
            skip = False
        elif arg in options:
            skip = True
        elif not arg.startswith(tuple(f"{o}=" for o in options)):
            kept.append(arg)
    return kept


def moved(cwd: str, target: str | None) -> str:
    """The directory after moving from ``cwd`` to ``target`` (None: no move; ``""``: unknown)."""
    if target is None:
        return cwd
    if not target or cwd == UNKNOWN_DIR:
        return UNKNOWN_DIR
    return target if target.startswith("/") else posixpath.normpath(posixpath.join(cwd, target))


def runner_dir(program: str, args: list[str]) -> str | None:
    """The directory a runner's own option moves the suite to (``make -C DIR test``), if any."""
    options = RUNNER_DIR_OPTIONS.get(program, ())
    for index, arg in enumerate(args):
        for option in options:
            if arg == option:
                value = args[index + 1] if index + 1 < len(args) else ""
            elif arg.startswith(option + "="):
                value = arg.split("=", 1)[1]
            elif len(option) == 2 and arg.startswith(option) and len(arg) > 2 and not arg.startswith("--"):
                value = arg[2:]
            else:
                continue
            return posixpath.dirname(value) or "." if option == "--manifest-path" and value else value
    return None


def with_environment(suite: Suite, simple: Simple, values: tuple[tuple[str, str | None], ...]) -> Suite:
    """Variables that change a runner's selection, read as its arguments: ``PYTEST_ADDOPTS`` (prefixed, given
    to ``env``, or assigned or exported anywhere in the line), ``PYTEST_PLUGINS``, ``GOFLAGS``."""
    env = dict(values)
    for word in simple.argv[:len(simple.argv) - len(strip_wrappers(simple.argv))]:
        match = _ENV_WORD.match(word)
        if match:
            env[match.group(1)] = match.group(2)
    if suite.family == "pytest":
        if "PYTEST_ADDOPTS" in env:
            suite = with_addopts(suite, env["PYTEST_ADDOPTS"])
        if env.get("PYTEST_PLUGINS", "") != "" and not suite.narrowed:
            suite = replace(suite, narrowed="PYTEST_PLUGINS loads plugins that can change which tests run")
    if suite.family == "go" and "GOFLAGS" in env and not suite.narrowed:
        flags = env["GOFLAGS"]
        if flags is None or re.search(r"(?:^|\s)-(?:run|skip|list)\b", flags):
            suite = replace(suite, narrowed="GOFLAGS filters or lists tests")
    return suite
