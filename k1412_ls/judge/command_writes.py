"""What a shell command changed in the workspace, read from the command itself (on the shared shell model).

A live run knows what a command changed by watching the workspace; a foreign run only has the
command's text. This module reads it with the same shell model (``k1412_ls.shell``):

- redirections (``> f``, ``>> f``, ``cat <<'EOF' > f``), ``tee``, ``touch``, ``truncate``, ``cp``/``mv``/
  ``install`` destinations, ``rm`` (a deletion), ``sed -i``/``perl -i`` file arguments;
- ``git checkout -- f``/``git restore f`` (the file is rewritten), ``git apply``/``patch`` with the patch
  in a here-document (the ``+++`` paths);
- Python given inline (``python - <<EOF``, ``python -c``): ``open(PATH, 'w'|'a'|'x')``, ``Path(PATH)
  .write_text``, with PATH a literal or a name assigned a literal in the same code.

A Python script file the run itself wrote (its text known from a here-document or a write tool) is
read the same way when a command runs it (``scripts_run``, ``written_by_script``). Only what the text
proves is reported; a command that may write in ways not read here (a script that
edits files itself) is not guessed at: the final diff, where the format has one, catches those files.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from k1412_ls.judge.foreign import relative_to_root
from k1412_ls.shell import Simple, parse_line, program_name, strip_wrappers

_EVERY_ARG = frozenset({"touch", "tee", "truncate"})
_DESTINATION = frozenset({"cp", "install"})
_PYTHONS = frozenset({"python", "python3", "python2", "pypy3"})
_LITERAL = r"""(?:[rRbBuU]{0,2})(['"])([^'"\n]+)\QUOTE"""
_OPEN = re.compile(r"\bopen\(\s*(?:" + _LITERAL.replace("QUOTE", "1") + r"|([A-Za-z_]\w*))\s*,\s*(?:mode\s*=\s*)?['\"]([rwaxbt+]+)['\"]")
_PATH_WRITE = re.compile(r"\bPath\(\s*(?:" + _LITERAL.replace("QUOTE", "1") + r"|([A-Za-z_]\w*))\s*\)\s*\.\s*write_(?:text|bytes)\(")
_VAR_WRITE = re.compile(r"\b([A-Za-z_]\w*)\s*\.\s*write_(?:text|bytes)\(")
_ASSIGN = re.compile(r"^\s*([A-Za-z_]\w*)\s*=\s*(?:Path\(\s*)?" + _LITERAL.replace("QUOTE", "2"), re.MULTILINE)
_PATCH_TARGET = re.compile(r"^\+\+\+ (?:b/)?(\S+)", re.MULTILINE)


@dataclass(frozen=True)
class Change:
    """One path a command changed: ``action`` is create|update|delete|move; ``text`` the new content when known."""

    path: str
    action: str
    text: str | None = None
    origin: str | None = None


def command_changes(command: str, root: str) -> list[Change]:
    """The workspace paths ``command`` writes, as far as its text says (see the module docstring)."""
    line = parse_line(command)
    changes: list[Change] = []
    cwd = "."
    for simple in line.commands:
        words = [w or "" for w in strip_wrappers(list(simple.argv))]
        program = program_name(words[0]) if words and words[0] else ""
        if program in ("cd", "pushd") and simple.nesting == 0 and len(words) == 2:
            moved = relative_to_root(words[1], root, cwd)
            cwd = moved if moved is not None else cwd
            continue
        for change in _simple_changes(simple, program, words):
            path = relative_to_root(change.path, root, cwd)
            if path is None or path == "." or path.startswith("/dev/"):
                continue
            origin = relative_to_root(change.origin, root, cwd) if change.origin else None
            changes.append(Change(path, change.action, change.text, origin))
    return _merged(changes)


def _merged(changes: list[Change]) -> list[Change]:
    """One entry per path, the last action winning (a create then an update is still a create)."""
    result: dict[str, Change] = {}
    for change in changes:
        earlier = result.get(change.path)
        if earlier is not None and earlier.action == "create" and change.action == "update":
            change = Change(change.path, "create", change.text, change.origin)
        result[change.path] = change
    return list(result.values())


def _simple_changes(simple: Simple, program: str, words: list[str]) -> list[Change]:
    found: list[Change] = []
    body = simple.heredoc if simple.heredoc is not None else simple.herestring
    for target in simple.writes_to:
        if target and not target.startswith("&") and not target.isdigit():
            # The text is known when the command only passes a here-document on (``cat <<EOF > f``).
            known = body if program == "cat" and len(words) == 1 else None
            found.append(Change(target, "update", known))
    args = [w for w in words[1:] if w and not w.startswith("-")]
    if program in _EVERY_ARG:
        found += [Change(a, "update") for a in args]
    elif program == "rm":
        found += [Change(a, "delete") for a in args]
    elif program in _DESTINATION and len(args) >= 2:
        found.append(Change(args[-1], "update"))
    elif program == "mv" and len(args) == 2:
        found.append(Change(args[1], "move", origin=args[0]))
    elif program in ("sed", "perl") and _in_place(program, words[1:]):
        found += [Change(a, "update") for a in _edited_files(program, words[1:])]
    elif program == "git":
        found += _git_changes(words[1:], body)
    elif program == "patch" and body:
        found += [Change(p, "update") for p in _PATCH_TARGET.findall(body) if p != "/dev/null"]
    elif program in _PYTHONS:
        code = _inline_code(words[1:], body)
        if code:
            found += [Change(p, "update") for p in python_written_paths(code)]
    return found


def _in_place(program: str, args: list[str]) -> bool:
    for arg in args:
        if arg == "--in-place" or arg.startswith("--in-place="):
            return True
        if arg.startswith("-") and not arg.startswith("--") and "i" in arg[1:]:
            return program == "sed" or "e" not in arg[1:arg.index("i")]
    return False


def _edited_files(program: str, args: list[str]) -> list[str]:
    """The file operands of ``sed -i``/``perl -pi``: positionals after the script (or all, with ``-e``)."""
    scripted = False
    files: list[str] = []
    skip = False
    script_seen = False
    for arg in args:
        if skip:
            skip = False
            continue
        if arg in ("-e", "--expression", "-f", "--file"):
            scripted, skip = True, True
            continue
        if arg.startswith("-") and arg != "-":
            if program == "perl" and "e" in arg[1:]:
                scripted, skip = True, True
            continue
        if not scripted and not script_seen:
            script_seen = True
            continue
        files.append(arg)
    return files


def _git_changes(args: list[str], body: str | None) -> list[Change]:
    positional = [a for a in args if not a.startswith("-")]
    if not positional:
        return []
    sub, rest = positional[0], positional[1:]
    if sub in ("checkout", "restore") and "--" in args:
        return [Change(a, "update") for a in args[args.index("--") + 1:]]
    if sub == "restore":
        return [Change(a, "update") for a in rest]
    if sub == "apply" and body:
        return [Change(p, "update") for p in _PATCH_TARGET.findall(body) if p != "/dev/null"]
    if sub == "rm":
        return [Change(a, "delete") for a in rest]
    if sub == "mv" and len(rest) == 2:
        return [Change(rest[1], "move", origin=rest[0])]
    return []


def _inline_code(args: list[str], body: str | None) -> str | None:
    for index, arg in enumerate(args):
        if arg == "-c":
            return args[index + 1] if index + 1 < len(args) else None
        if arg == "-":
            return body
        if not arg.startswith("-"):
            return None  # a script file: what it writes is not in this line
    return body


def python_written_paths(code: str) -> list[str]:
    """Paths inline Python code opens for writing (literals, or names assigned a literal in the code)."""
    names = {m.group(1): m.group(3) for m in _ASSIGN.finditer(code)}
    found: list[str] = []
    for match in _OPEN.finditer(code):
        mode = match.group(4)
        path = match.group(2) or names.get(match.group(3) or "")
        if path and any(c in mode for c in "wax+"):
            found.append(path)
    for match in _PATH_WRITE.finditer(code):
        path = match.group(2) or names.get(match.group(3) or "")
        if path:
            found.append(path)
    for match in _VAR_WRITE.finditer(code):
        if match.group(1) in names:
            found.append(names[match.group(1)])
    return list(dict.fromkeys(found))


def scripts_run(command: str, root: str) -> list[str]:
    """Workspace paths of the Python scripts ``command`` runs (``python3 x.py``, ``python x.py args``)."""
    found: list[str] = []
    cwd = "."
    for simple in parse_line(command).commands:
        words = [w or "" for w in strip_wrappers(list(simple.argv))]
        program = program_name(words[0]) if words and words[0] else ""
        if program in ("cd", "pushd") and simple.nesting == 0 and len(words) == 2:
            cwd = relative_to_root(words[1], root, cwd) or cwd
            continue
        if program in _PYTHONS:
            script = next((w for w in words[1:] if not w.startswith("-")), None)
            if script and script.endswith(".py") and "-c" not in words and "-m" not in words:
                path = relative_to_root(script, root, cwd)
                if path:
                    found.append(path)
    return found


def written_by_script(script: str, text: str, root: str) -> list[str]:
    """Workspace paths a Python script this run wrote opens for writing (relative ones from its folder)."""
    folder = script.rsplit("/", 1)[0] if "/" in script else "."
    return [p for p in (relative_to_root(raw, root, folder) for raw in python_written_paths(text)) if p]
