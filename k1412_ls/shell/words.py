"""Shell words as bash reads them: quote removal, wrappers (``env``, ``timeout``, ``uv run`` …), program names."""

from __future__ import annotations

import re

from tree_sitter import Node

SHELLS = frozenset({"bash", "sh", "dash", "zsh", "ksh", "mksh", "ash"})


def _unescape_word(text: str) -> str:
    return re.sub(r"\\(.)", r"\1", text, flags=re.DOTALL)


def _unescape_double(text: str) -> str:
    return re.sub(r'\\([$`"\\\n])', lambda m: "" if m.group(1) == "\n" else m.group(1), text)


def _ansi_c(text: str) -> str:
    body = text[2:-1]
    try:
        return body.encode("latin-1", "backslashreplace").decode("unicode_escape")
    except (UnicodeDecodeError, UnicodeEncodeError):
        return body


def word_value(node: Node) -> str | None:
    """The literal value of an argument node, or None when it depends on an expansion."""
    kind = node.type
    text = node_text(node)
    if kind in ("word", "number"):
        return _unescape_word(text)
    if kind == "raw_string":
        return text[1:-1]
    if kind == "ansi_c_string":
        return _ansi_c(text)
    if kind == "string":
        parts: list[str] = []
        for child in node.named_children:
            if child.type != "string_content":
                return None
            parts.append(_unescape_double(node_text(child)))
        return "".join(parts)
    if kind == "concatenation":
        values = [word_value(child) for child in node.children]
        if any(v is None for v in values):
            return None
        return "".join(v for v in values if v is not None)
    if kind == "translated_string":
        inner = node.named_children[0] if node.named_children else None
        return word_value(inner) if inner is not None else ""
    return None


_BRACE = re.compile(r"\{[^{}]*(?:,|\.\.)[^{}]*\}")
_GLOB = re.compile(r"[*?]|\[.+\]|[@!+]\(")


def is_pattern(node: Node) -> bool:
    """Whether bash expands the word as a pattern: brace expansion (``{push,}``, ``{a..c}``) or a glob
    (``pus?``, ``*``, ``[p]ush``, extglob) in its unquoted parts; quoted parts count as plain text."""
    if node.type == "word":
        unquoted = node_text(node)
    elif node.type == "concatenation":
        unquoted = "".join(node_text(c) if c.type == "word" or not c.is_named else "x" for c in node.children)
    else:
        return False
    unquoted = re.sub(r"\\.", "x", unquoted, flags=re.DOTALL)
    return bool(_BRACE.search(unquoted) or _GLOB.search(unquoted))


def node_text(node: Node) -> str:
    return (node.text or b"").decode("utf-8", "replace")


# Wrapper → its options that consume the next word.
WRAPPERS: dict[str, frozenset[str]] = {
    "env": frozenset({"-u", "--unset", "-C", "--chdir", "-S", "--split-string"}),
    "sudo": frozenset({"-u", "-g", "-C", "-D", "-h", "-p", "-U", "-r", "-t"}),
    "doas": frozenset({"-u", "-C"}),
    "exec": frozenset({"-a"}),
    "command": frozenset(), "builtin": frozenset(), "nohup": frozenset(), "time": frozenset(), "coproc": frozenset(),
    "nice": frozenset({"-n", "--adjustment"}), "ionice": frozenset({"-c", "-n", "-p"}),
    "stdbuf": frozenset({"-i", "-o", "-e"}), "setsid": frozenset(), "unbuffer": frozenset(),
    "timeout": frozenset({"-s", "--signal", "-k", "--kill-after"}),
    "xargs": frozenset({"-n", "-I", "-P", "-d", "-L", "-s", "-a", "-E"}),
    "npx": frozenset({"-p", "--package"}), "pnpx": frozenset(), "bunx": frozenset(),
    "strace": frozenset({"-o", "-e", "-p", "-s", "-u", "-E", "-P", "-a", "-b", "-I", "-O", "-S", "-U", "-X"}),
    "ltrace": frozenset({"-o", "-e", "-p", "-s", "-u", "-a", "-n"}), "chrt": frozenset({"-p"}),
    "taskset": frozenset({"-p", "-c"}), "unshare": frozenset(), "busybox": frozenset(),
}


RUNNERS = frozenset({"uv", "poetry", "pipenv", "pdm", "hatch", "conda", "rye"})


_ASSIGNMENT = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*=")


# Wrapper options that start the wrapped command in another directory (``env -C DIR``, ``sudo -D DIR``).
_CHDIR_OPTIONS: dict[str, tuple[str, ...]] = {"env": ("-C", "--chdir"), "sudo": ("-D", "--chdir"),
                                               "unshare": ("-w", "--wd")}
_RUNNER_VALUE_OPTIONS = frozenset({"--directory", "--project", "--cwd", "--with", "--python", "-p", "--env-file",
                                   "--extra", "--group", "--package", "--from", "-C"})


def strip_wrappers(words: list[str]) -> list[str]:
    """The command a wrapper runs: ``env X=1 timeout 60 uv run pytest -q`` → ``pytest -q``."""
    return words[_walk_wrappers(words, for_chdir=False)[0]:]


def wrapper_chdir(words: list[str]) -> str | None:
    """The directory wrappers in front of a command move it to (``env -C /tmp/ok pytest`` → ``/tmp/ok``);
    ``""`` when the directory comes from an expansion, None when no wrapper moves it."""
    return _walk_wrappers(words, for_chdir=True)[1]


def _walk_wrappers(words: list[str], *, for_chdir: bool) -> tuple[int, str | None]:
    """Where the wrapped command starts in ``words``, and the directory a wrapper moves it to (if any).

    ``for_chdir``: directory options of every wrapper and a runner's value
    options (``uv run --directory DIR``) take their value with them;
    :func:`strip_wrappers` has always skipped only the options it lists, one
    word at a time for runners, and keeps doing so.
    """
    moved: str | None = None
    index = 0
    while index < len(words):
        word = words[index]
        name = word.rsplit("/", 1)[-1]
        if _ASSIGNMENT.match(word):
            index += 1
        elif name in WRAPPERS:
            chdir = _CHDIR_OPTIONS.get(name, ())
            takes_value = WRAPPERS[name] | frozenset(chdir) if for_chdir else WRAPPERS[name]
            index += 1
            while index < len(words) and (words[index].startswith("-") or _ASSIGNMENT.match(words[index])):
                option = words[index]
                head = option.split("=", 1)[0]
                if option in chdir:
                    moved = words[index + 1] if index + 1 < len(words) else ""
                elif head in chdir and head.startswith("--"):
                    moved = option.split("=", 1)[1]
                elif any(len(c) == 2 and option.startswith(c) and len(option) > 2 for c in chdir):
                    moved = option[2:]
                index += 2 if option in takes_value else 1
            if name == "timeout" and index < len(words):
                index += 1  # the duration
        elif name in RUNNERS and index + 1 < len(words) and words[index + 1] == "run":
            index += 2
            while index < len(words) and words[index].startswith("-"):
                option = words[index]
                if option in ("--directory", "--project", "--cwd") or option.startswith(
                        ("--directory=", "--project=", "--cwd=")):
                    moved = option.split("=", 1)[1] if "=" in option else (
                        words[index + 1] if index + 1 < len(words) else "")
                index += 2 if for_chdir and option in _RUNNER_VALUE_OPTIONS else 1
        else:
            break
    return index, moved


_GIT_VALUE_OPTIONS = frozenset({"-c", "-C", "--git-dir", "--work-tree", "--namespace", "--exec-path",
                                "--config-env"})


def git_subcommand_index(args: list[str]) -> int:
    """Where the sub-command of ``git ARGS`` stands in ``args`` (``len(args)`` when there is none)."""
    skip = False
    for index, word in enumerate(args):
        if skip:
            skip = False
            continue
        if word in _GIT_VALUE_OPTIONS:
            skip = True
            continue
        if word.startswith("-"):
            continue
        return index
    return len(args)


def git_subcommand(args: list[str]) -> str:
    """The sub-command of ``git ARGS`` (``git -C dir -c user.name=x commit`` → ``commit``)."""
    index = git_subcommand_index(args)
    return args[index] if index < len(args) else ""


def program_name(word: str) -> str:
    """A program's name as people say it: ``/usr/bin/python3.11`` → ``python3.11``."""
    return word.rsplit("/", 1)[-1] if "/" in word and not word.startswith("./") else word


STATEMENT_TYPES = frozenset({
    "command", "list", "pipeline", "subshell", "compound_statement", "redirected_statement", "if_statement",
    "while_statement", "until_statement", "for_statement", "c_style_for_statement", "case_statement",
    "function_definition", "negated_command", "variable_assignment", "variable_assignments", "declaration_command",
    "unset_command", "test_command", "do_group", "case_item", "select_statement",
})


def is_statement(node: Node) -> bool:
    return node.type in STATEMENT_TYPES


def inline_script(argv: list[str]) -> str | None:
    """The ``-c`` script of a shell invocation (``bash -c 'x'``, ``bash -lc 'x'``), if any."""
    for index, word in enumerate(argv[1:], start=1):
        if word == "--":
            return None
        if word.startswith("-") and not word.startswith("--") and "c" in word[1:]:
            return argv[index + 1] if index + 1 < len(argv) else None
        if not word.startswith(("-", "+")):
            return None
    return None


def reads_script_from_input(argv: list[str]) -> bool:
    """A shell started without ``-c`` and without a script file reads its script from standard input."""
    for word in argv[1:]:
        if word in ("-s", "-"):
            return True
        if word == "--":
            continue
        if not word.startswith(("-", "+")):
            return False  # a script file (or its name from an expansion)
    return True
