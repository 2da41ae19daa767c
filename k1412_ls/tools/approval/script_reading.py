"""Scripts a command line runs, read for the ``ask``/``forbid`` approval rules.

A rule sees the line the model asks for; ``make deploy`` or ``bash release.sh``
would hide a forbidden ``git push`` one step away. So for a simple command
that runs ``make`` (its recipes, from ``-f FILE`` or the usual makefile names,
``-C DIR`` followed) or a shell script (``bash x.sh``, ``sh x.sh``, ``./x.sh``
with a shell ``#!``), the script's text is read and its commands are checked
against the rules too. A script the same line writes (``printf … > Makefile &&
make``) cannot be read before it runs: :func:`scripts_run_by` says None, and
the approval policy treats the line as unreadable. What other programs start
(a Python script calling ``os.system``) is still not seen.
"""

from __future__ import annotations

import json
import os
import re
from pathlib import Path

from k1412_ls.shell.words import SHELLS
from k1412_ls.tools.approval.judged_reads import record, record_absent

MAX_SCRIPT_BYTES = 256 * 1024
MAKEFILES = ("GNUmakefile", "makefile", "Makefile")
_MAKE_FILE_OPTIONS = ("-f", "--file", "--makefile")
_MAKE_DIR_OPTIONS = ("-C", "--directory")


def scripts_run_by(words: list[str], raw: list[str], base: Path, written: set[str]) -> list[str] | None:
    """Shell text the simple command runs from files (see the module docstring), or None when unreadable.

    ``words`` are the command's words as rules see them, ``raw`` its words as
    written (after wrappers), ``base`` the directory relative paths start from,
    ``written`` the normalized paths the same line writes.
    """
    if not words:
        return []
    if words[0] in ("make", "gmake"):
        return _make_recipes(raw[1:], base, written)
    if words[0] in ("npm", "pnpm", "yarn"):
        return _package_scripts(words, base, written)
    if words[0] in (".", "source"):
        if len(raw) < 2 or not raw[1]:
            return None  # the sourced file is named by an expansion
        return _script(base / raw[1], written, require_shebang=False)
    if words[0] in SHELLS:
        if any(w.startswith("-") and not w.startswith("--") and "c" in w for w in raw[1:]):
            return []  # an inline -c string is read by the shell model itself
        script = next((w for w in raw[1:] if not w.startswith(("-", "+"))), None)
        if script is None:
            return []
        if not script:
            return None  # the script is named by an expansion
        return _script(base / script, written, require_shebang=False)
    if raw and "/" in raw[0]:
        return _script(base / raw[0], written, require_shebang=True)
    return []


def _make_recipes(args: list[str], base: Path, written: set[str]) -> list[str] | None:
    directory, files = base, []
    for index, word in enumerate(args):
        value = args[index + 1] if index + 1 < len(args) else ""
        if word in _MAKE_DIR_OPTIONS:
            directory = directory / value
        elif word in _MAKE_FILE_OPTIONS:
            files.append(value)
        elif word.startswith(("--file=", "--makefile=")):
            files.append(word.split("=", 1)[1])
        elif word.startswith("-f") and len(word) > 2:
            files.append(word[2:])
    paths = [directory / f for f in files] if files else [directory / name for name in MAKEFILES]
    if any(_key(p) in written for p in paths):
        return None
    found = next((p for p in paths if p.is_file()), None)
    if found is None:
        for path in paths:
            record_absent(path)  # make's built-in rules run; a makefile that appears later was never read
        return [] if not files else None
    text = _read(found)
    if text is None:
        return None
    text = text.replace("\\\n", " ")
    if _MAKE_UNREADABLE.search(text):
        return None  # includes, another shell, eval/file/call functions: what runs is not in this text
    scripts = [line.lstrip("\t").lstrip("@-+ ") for line in text.splitlines() if line.startswith("\t")]
    scripts += [m.group(1) for m in _MAKE_SHELL.finditer(text)]
    scripts += [m.group(1) for m in _MAKE_SHELL_ASSIGN.finditer(text)]
    return scripts


# Make constructs that run or pull in what this text does not show: other makefiles, the shell recipes run in,
# functions that build make text or commands at run time, ``$(shell …)`` nested in another function.
_MAKE_UNREADABLE = re.compile(r"^\s*-?s?include\b|^\s*(?:override\s+|export\s+)?(?:SHELL|\.SHELLFLAGS|MAKEFLAGS|MAKESHELL)\s*[:+?!]?="
                              r"|\$[({]\s*(?:eval|file|call|value|guile)\b|\$[({]\s*shell\b[^)}]*[({]", re.MULTILINE)
_MAKE_SHELL = re.compile(r"\$[({]\s*shell\s+([^)}]*)[)}]")
_MAKE_SHELL_ASSIGN = re.compile(r"^[^\t#=]*?!=(.*)$", re.MULTILINE)


_NPM_LIFECYCLE = {"test": ["pretest", "test", "posttest"], "start": ["prestart", "start", "poststart"],
                  "stop": ["prestop", "stop", "poststop"], "restart": ["prerestart", "restart", "postrestart"],
                  "install": ["preinstall", "install", "postinstall", "prepare"], "i": ["preinstall", "install",
                  "postinstall", "prepare"], "ci": ["preinstall", "install", "postinstall", "prepare"],
                  "publish": ["prepublishOnly", "prepack", "prepare", "postpack", "publish", "postpublish"]}


def _package_scripts(words: list[str], base: Path, written: set[str]) -> list[str] | None:
    """The ``package.json`` scripts ``npm run X`` (``npm test``, ``yarn X``, ``pnpm X``, install hooks) runs."""
    args = [w for w in words[1:] if not w.startswith("-")]
    if not args:
        return [] if words[0] != "yarn" else _package_scripts([words[0], "install"], base, written)
    if args[0] in ("run", "run-script", "rum", "urn"):
        if len(args) < 2:
            return []
        names = [f"pre{args[1]}", args[1], f"post{args[1]}"] if args[1] else [""]
    elif args[0] in _NPM_LIFECYCLE:
        names = _NPM_LIFECYCLE[args[0]]
    elif words[0] in ("yarn", "pnpm"):
        names = [f"pre{args[0]}", args[0], f"post{args[0]}"] if args[0] else [""]
    else:
        return []
    if "" in names:
        return None  # the script's name comes from an expansion
    path = base / "package.json"
    if _key(path) in written:
        return None
    if not path.is_file():
        record_absent(path)
        return []
    # ``npm install`` and its kin rewrite package.json as their job: judged, but not bound read-only.
    text = _read(path, pin=args[0] not in ("install", "i", "ci", "add"))
    try:
        scripts = json.loads(text or "").get("scripts", {})
    except (ValueError, AttributeError):
        return None
    if not isinstance(scripts, dict):
        return None
    return [str(scripts[name]) for name in names if name in scripts]


_CONFIG_SECTION = re.compile(r'^\s*\[\s*([A-Za-z0-9.-]+)(?:\s+"[^"]*")?\s*\]\s*(.*)$')
_CONFIG_ENTRY = re.compile(r"^\s*([A-Za-z][A-Za-z0-9-]*)\s*=\s*(.*?)\s*$")


def repo_git_aliases(base: Path) -> dict[str, str]:
    """The ``[alias]`` entries of the repository's git config at ``base`` (``.git/config``, a worktree's
    ``gitdir:``, and the files its ``[include]``/``[includeIf]`` sections name), lower-cased names to values.

    Only for matching rules more precisely: a git sub-command that is not a git command is asked about
    whether or not it is found here (other configs, includes this reader does not follow, ``git-*`` programs).
    """
    git = base / ".git"
    if git.is_file():
        head = _read(git, judged=False) or ""
        if head.startswith("gitdir:"):
            git = (base / head[len("gitdir:"):].strip()).resolve()
    entries: list[tuple[str, str, str]] = []
    _read_config(git / "config", entries, depth=0)
    found: dict[str, str] = {}
    for section, name, value in entries:
        if section == "alias":
            found.setdefault(name, value)
    return found


# Repository settings that make a reading git command run a program: the fsmonitor hook (``git status``), an
# external diff and textconv drivers (``git diff``/``log -p``), clean/smudge/process filters, signature programs.
_RUNS_PROGRAMS = frozenset({("core", "fsmonitor"), ("diff", "external")})
_RUNS_PROGRAM_NAMES = frozenset({"textconv", "clean", "smudge", "process", "program", "command", "driver"})


def repo_config_runs_programs(base: Path) -> bool:
    """Whether the repository's own config (as :func:`repo_git_aliases` reads it) names a program that git's
    reading commands start; a config that cannot be read counts as naming one."""
    git = base / ".git"
    if git.is_file():
        head = _read(git, judged=False) or ""
        if head.startswith("gitdir:"):
            git = (base / head[len("gitdir:"):].strip()).resolve()
    entries: list[tuple[str, str, str]] = []
    if not _read_config(git / "config", entries, depth=0):
        return True
    return any((section, name) in _RUNS_PROGRAMS or name in _RUNS_PROGRAM_NAMES for section, name, _ in entries)


def _read_config(path: Path, found: list[tuple[str, str, str]], depth: int) -> bool:
    """Read ``path`` and the files it includes into ``found``; False when some of it cannot be read."""
    try:
        if not path.exists():
            return True
        if not path.is_file():
            return False  # FIFOs and devices are never opened
    except OSError:
        return False
    text = _read(path, judged=False)
    if text is None or depth > 3:
        return False
    section = ""
    whole = True
    for line in text.splitlines():
        match = _CONFIG_SECTION.match(line)
        if match:
            section, line = match.group(1).lower(), match.group(2)
        entry = _CONFIG_ENTRY.match(line)
        if entry is None:
            continue
        name, value = entry.group(1).lower(), entry.group(2).split(" #")[0].split(" ;")[0].strip().strip('"')
        found.append((section, name, value))
        if section in ("include", "includeif") and name == "path":
            target = Path(os.path.expanduser(value))
            whole = _read_config(target if target.is_absolute() else path.parent / target, found, depth + 1) and whole
    return whole


def _script(path: Path, written: set[str], *, require_shebang: bool) -> list[str] | None:
    if _key(path) in written:
        return None
    if not path.is_file():
        if not os.path.lexists(path):
            record_absent(path)  # a script that appears before it runs was never read
        return []
    if require_shebang:
        try:
            with open(path, "rb") as handle:
                first = handle.readline(256).decode("utf-8", "replace")
        except OSError:
            return None
        if first.startswith("\x7fELF") or (first.startswith("#!") and not any(s in first for s in SHELLS)):
            record(path, None)  # that it is not a shell script was judged: the program runs as it was read
            return []  # a binary, or a script for another interpreter (Python …): its programs are not read
        # No #! at all: the shell runs the file as a shell script itself (ENOEXEC), so it is read as one.
    text = _read(path)
    return None if text is None else [text]


def _read(path: Path, *, judged: bool = True, pin: bool = True) -> str | None:
    """The text of ``path`` (None: unreadable, too large or binary); recorded as judged unless ``judged=False``
    (``tools.approval.judged_reads``: the command then runs these exact bytes)."""
    try:
        with open(path, "rb") as handle:
            data = handle.read(MAX_SCRIPT_BYTES + 1)
    except OSError:
        return None
    if len(data) > MAX_SCRIPT_BYTES or b"\0" in data:
        return None
    if judged:
        record(path, data, pin=pin)
    return data.decode("utf-8", "replace")


def _key(path: Path) -> str:
    return os.path.normpath(str(path))


def written_keys(targets: list[str], base: Path) -> set[str]:
    """The normalized paths a line writes (redirection and ``cp``/``tee``-style targets)."""
    return {_key(base / t) if not os.path.isabs(t) else _key(Path(t)) for t in targets if t}


__all__ = ["MAKEFILES", "MAX_SCRIPT_BYTES", "repo_config_runs_programs", "repo_git_aliases", "scripts_run_by", "written_keys"]
