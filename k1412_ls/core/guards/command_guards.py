"""Command guards: interactive programs, documents run as programs, and command identity.

Commands run with stdin closed, so a bare REPL (``python3``, ``bash``,
``node`` …) does nothing useful and a full-screen program cannot work at all.
The command line is read with the shared shell model (``k1412_ls.shell``,
the same bash parser the evidence gate uses) into simple commands. In each
one, leading ``VAR=value`` assignments and wrappers (``env``, ``sudo``,
``exec``, ``nohup``, ``time``, ``nice``, ``timeout``, ``uv run`` …) are
skipped and the program is judged by the basename of its path
(``/usr/bin/python3``). A simple command that receives stdin (the right side
of a pipe, or ``<``, ``<<``, ``<<<``) is not bare. When the line cannot be
parsed (unbalanced quotes), nothing is refused: a guard never blocks what it
does not understand.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import PurePosixPath
from typing import Any

from k1412_ls.core.guards.normalize import normalize_path
from k1412_ls.core.model_port import ToolCall
from k1412_ls.shell import git_subcommand, normalized_text, parse_line, strip_wrappers

_ASSIGNMENT = re.compile(r"[A-Za-z_][A-Za-z0-9_]*=")
DOCUMENT_SUFFIXES = frozenset({
    ".md", ".markdown", ".rst", ".txt", ".adoc", ".org", ".csv", ".tsv", ".json", ".jsonl", ".ndjson",
    ".yaml", ".yml", ".toml", ".xml", ".html", ".htm", ".ini", ".cfg", ".log", ".pdf", ".doc", ".docx",
    ".odt", ".xls", ".xlsx", ".ods", ".ppt", ".pptx", ".png", ".jpg", ".jpeg", ".gif", ".bmp", ".svg",
    ".webp", ".ico", ".tif", ".tiff", ".mp3", ".mp4", ".wav", ".ogg", ".avi", ".mov", ".mkv", ".zip",
    ".tar", ".gz", ".tgz", ".bz2", ".xz", ".7z", ".parquet", ".feather", ".arrow", ".npy", ".npz", ".h5",
    ".hdf5", ".sqlite", ".sqlite3", ".db", ".lock", ".pkl", ".pickle",
})


@dataclass(frozen=True)
class Interpreter:
    """How one family of programs takes its program text, and what makes it interactive."""

    label: str                       # language name used in messages
    advice: str                      # what to do instead (a clause of the refusal)
    providers: frozenset[str]        # options that supply the program (-c, -m, -e …)
    value_options: frozenset[str] = frozenset()  # options that consume the next token
    interactive: frozenset[str] = frozenset({"-i"})
    info: frozenset[str] = frozenset({"--version", "--help", "-h"})
    runs_files: bool = True          # the first positional argument is a program file
    min_positionals: int = 1         # positionals needed before it stops being interactive
    screen: bool = False             # full-screen program: interactive whatever the arguments


_PY = Interpreter("Python", "run a script file or use python3 -c '…'", frozenset({"-c", "-m"}),
                  frozenset({"-W", "-X", "--check-hash-based-pycs"}),
                  info=frozenset({"--version", "-V", "--help", "-h", "-?"}))
_SH = Interpreter("shell", "run a script file or use bash -c '…'", frozenset({"-c"}),
                  frozenset({"-o", "+o", "-O", "+O", "--rcfile", "--init-file"}),
                  info=frozenset({"--version", "--help"}))
_NODE = Interpreter("JavaScript", "run a script file or use node -e '…'",
                    frozenset({"-e", "--eval", "-p", "--print", "-c", "--check", "--test", "--run"}),
                    frozenset({"-r", "--require", "--import", "--loader", "--env-file"}),
                    interactive=frozenset({"-i", "--interactive"}),
                    info=frozenset({"-v", "--version", "-h", "--help"}))
_RUBY = Interpreter("Ruby", "run a script file or use ruby -e '…'", frozenset({"-e"}), frozenset({"-r", "-I"}),
                    info=frozenset({"-v", "--version", "-h", "--help"}))
_PERL = Interpreter("Perl", "run a script file or use perl -e '…'", frozenset({"-e", "-E"}), frozenset({"-I", "-M"}),
                    info=frozenset({"-v", "--version", "-h", "--help"}))
_PHP = Interpreter("PHP", "run a script file or use php -r '…'", frozenset({"-r", "-l"}), frozenset({"-d", "-c"}),
                   interactive=frozenset({"-a"}), info=frozenset({"-v", "--version", "-h", "--help"}))
_LUA = Interpreter("Lua", "run a script file or use lua -e '…'", frozenset({"-e"}), frozenset({"-l"}), info=frozenset({"-v"}))
_GENERIC_INFO = frozenset({"--version", "-v", "-V", "--help", "-h"})
_NON_INTERACTIVE = "run a script file or pass the code with the program's non-interactive option"
# REPLs that run a script given as the first positional argument.
_REPL = Interpreter("interactive", _NON_INTERACTIVE, frozenset({"-e", "--eval", "-c", "-f", "--file"}),
                    info=_GENERIC_INFO, runs_files=False)
# Interactive whatever positionals they get (irb FILE still opens a REPL; psql DB waits for SQL).
_ALWAYS = Interpreter("interactive", _NON_INTERACTIVE, frozenset({"-e", "--eval"}), info=_GENERIC_INFO,
                      runs_files=False, min_positionals=10**6)
_DB = Interpreter("SQL", "pass the SQL with -c/-e or a file with -f", frozenset({
    "-c", "--command", "-f", "--file", "-e", "--execute", "-l", "--list"}),
    frozenset({"-U", "-u", "-h", "-p", "-d", "-P", "-D", "--host", "--port", "--user", "--dbname"}),
    info=frozenset({"--version", "-V", "--help", "-?"}), runs_files=False, min_positionals=10**6)
_SCREEN = Interpreter("full-screen", "use read_file, write_file or patch_file, or a non-interactive command,", frozenset({
    "--batch", "-batch", "--script", "--headless", "-es", "-Es"}),
    info=frozenset({"--version", "-v", "--help", "-h"}), runs_files=False, screen=True)
_SQLITE = Interpreter("SQL", "pass the SQL as an argument (sqlite3 DB 'SQL')", frozenset(), frozenset({"-cmd"}),
                      runs_files=False, min_positionals=2, info=frozenset({"-version", "--version", "-help"}))
_PAGER = Interpreter("pager", "use cat or read_file", frozenset(), runs_files=False, interactive=frozenset())
_SOURCE = Interpreter("shell", "source a shell script", frozenset(), interactive=frozenset(), info=frozenset(),
                      min_positionals=0)

_FAMILIES: dict[str, Interpreter] = {
    **dict.fromkeys(("bash", "sh", "zsh", "dash", "ksh", "mksh", "fish", "csh", "tcsh", "ash"), _SH),
    **dict.fromkeys(("node", "nodejs"), _NODE),
    "ruby": _RUBY, "perl": _PERL, "php": _PHP, "lua": _LUA, "luajit": _LUA,
    **dict.fromkeys(("julia", "R", "deno", "scala", "ocaml", "guile", "racket", "tclsh", "wish", "gdb",
                     "mongo", "mongosh", "redis-cli", "erl", "clj", "clojure", "sbt", "bc"), _REPL),
    **dict.fromkeys(("irb", "ghci", "iex", "utop", "jshell", "pry", "ftp", "telnet"), _ALWAYS),
    **dict.fromkeys(("psql", "mysql", "mariadb"), _DB),
    **dict.fromkeys(("less", "more", "most"), _PAGER),
    **dict.fromkeys(("vim", "vi", "nvim", "nano", "emacs", "pico", "joe", "micro", "mcedit", "top",
                     "htop", "btop", "atop", "mc"), _SCREEN),
    "sqlite3": _SQLITE, "source": _SOURCE, ".": _SOURCE,
}
_PY_NAME = re.compile(r"(?:python|pypy)(?:\d+(?:\.\d+)*)?|ipython3?|bpython|ptpython")


def _family(program: str) -> Interpreter | None:
    if _PY_NAME.fullmatch(program):
        return _PY
    return _FAMILIES.get(program)


def _strip_wrappers(words: list[str]) -> list[str]:
    return strip_wrappers(words)


def _is_document(word: str) -> bool:
    return PurePosixPath(word).suffix.lower() in DOCUMENT_SUFFIXES


def _judge(words: list[str], stdin: bool) -> str | None:
    """The refusal sentence for one simple command, or None when it may run."""
    words = _strip_wrappers(words)
    if not words:
        return None
    program_word = words[0]
    program = PurePosixPath(program_word).name
    if _is_document(program_word):
        return (f"{program_word} is a document or data file, not a program; read it with read_file (or cat), "
                f"or run a script that processes it.")
    family = _family(program)
    if family is None:
        return None
    positionals: list[str] = []
    args = iter(words[1:])
    for arg in args:
        if positionals and family.min_positionals <= 1:
            break  # everything after the program file belongs to the program
        if arg in family.info:
            return None
        head = arg.split("=", 1)[0]
        if arg in family.providers or head in family.providers:
            return _inner(family, arg, args, stdin)
        if arg in family.interactive:
            return _interactive(program, arg, family)
        if arg.startswith("-") and not arg.startswith("--") and len(arg) > 2 and not family.screen:
            for letter in (f"-{c}" for c in arg[1:]):  # a cluster such as -uc or -ic
                if letter in family.providers:
                    return _inner(family, letter, args, stdin)
                if letter in family.interactive:
                    return _interactive(program, arg, family)
                if letter in family.value_options:
                    break  # the rest of the cluster is that option's value (-Wignore)
        if arg in family.value_options:
            next(args, None)
            continue
        if arg.startswith(("-", "+")) and arg not in ("-", "+"):
            continue
        positionals.append(arg)
    if family.screen:
        if program in ("top", "atop") and "-b" in words:
            return None
        return (f"{program} is an interactive full-screen program, which cannot work here; "
                f"{family.advice} instead.")
    if positionals and family.runs_files and _is_document(positionals[0]):
        return (f"{program} cannot run {positionals[0]}: it is a document or data file, not a "
                f"{family.label} program; read it with read_file, or run a script that loads it.")
    if len(positionals) >= family.min_positionals or stdin:
        return None
    if len(words) > 1:
        return _interactive(program, " ".join(words[1:]), family)
    return (f"{program} with no arguments starts an interactive session, which cannot work here "
            f"(stdin is closed); {family.advice}.")


def _inner(family: Interpreter, flag: str, args: Iterator[str], stdin: bool) -> str | None:
    """A shell's ``-c`` script is a command line of its own: judge it the same way."""
    if family is not _SH or flag != "-c":
        return None
    script = next(args, None)
    return check_command(script, stdin=stdin) if script else None


def _interactive(program: str, flags: str, family: Interpreter) -> str:
    shown = f"{program} {flags[:60]}".strip()
    return (f"{shown} starts an interactive session, which cannot work here (stdin is closed); "
            f"{family.advice} instead.")


def check_command(command: str, *, stdin: bool = False) -> str | None:
    """Why ``command`` must not run (one sentence), or None when it may.

    ``stdin`` says the whole line already receives input (a ``bash -c``
    script on the right side of a pipe).
    """
    line = parse_line(command)
    if not line.parsed:
        return None
    for simple in line.commands:
        if simple.nesting:
            continue  # judged through the ``bash -c`` that holds it, with that command's stdin
        reason = _judge(simple.argv, simple.stdin or stdin)
        if reason is not None:
            return reason
    return None


_INSPECTORS = frozenset({
    "ls", "cat", "head", "tail", "echo", "printf", "pwd", "grep", "egrep", "rg", "ag", "wc", "which", "type",
    "file", "stat", "du", "df", "env", "printenv", "tree", "less", "more", "diff", "cmp", "sort", "uniq", "cut",
    "tr", "nl", "od", "xxd", "hexdump", "md5sum", "sha256sum", "date", "whoami", "id", "uname", "true", "cd",
    "test", "[", "realpath", "readlink", "basename", "dirname", "ps", "jq", "column", "fold", "tac", "sed",
    "find", "awk",
})
_GIT_READS = frozenset({"status", "log", "diff", "show", "ls-files", "rev-parse", "blame", "grep", "describe",
                        "shortlog", "cat-file", "ls-tree"})
_MUTATING_FLAGS = {"sed": ("-i", "--in-place"), "find": ("-delete", "-exec", "-execdir", "-ok", "-fprint"),
                   "awk": ("-i",)}


def is_inspection(command: str) -> bool:
    """True when every part of ``command`` only looks (``ls``, ``cat``, ``git status`` …) and writes no file.

    Looking changes nothing a failed command depends on, so it never lifts
    the repeat block; anything not recognised counts as a possible change.
    """
    line = parse_line(command)
    if not line.parsed:
        return False
    for simple in line.commands:
        if any(target != "/dev/null" for target in simple.writes_to):
            return False  # output redirected into a file
        words = _strip_wrappers(simple.argv)
        if not words:
            continue
        program = PurePosixPath(words[0]).name
        if program == "git":
            if git_subcommand(words[1:]) not in _GIT_READS:
                return False
            continue
        if program not in _INSPECTORS:
            return False
        flags = _MUTATING_FLAGS.get(program, ())
        if any(w == f or w.startswith(f) for w in words[1:] for f in flags):
            return False
    return True


def command_text_key(command: str) -> str:
    """A command's identity: its shell tokens joined by single spaces (whitespace differences vanish)."""
    return normalized_text(command)


def status_discarded_parts(command: str) -> list[str]:
    """The simple commands of a line whose exit status cannot reach the line's exit code.

    In ``pytest || true``, ``pytest; exit 0``, ``pytest; echo done``,
    ``pytest &`` and ``if pytest; then …`` the ``pytest`` part is discarded:
    the line reports success whatever pytest did. ``&&`` and ``|`` (commands
    run with ``pipefail``) keep the status, and so does ``set -e``. A line
    that cannot be parsed yields nothing (never block what is not understood).
    """
    line = parse_line(command)
    if not line.parsed:
        return []
    return [" ".join(simple.argv) for simple in line.commands if not simple.reaches and not simple.nesting]


def cwd_key(cwd: Any) -> str:
    """A ``cwd`` argument's identity: absent, empty and ``.`` are the workspace root."""
    if not isinstance(cwd, str) or not cwd.strip():
        return "."
    return normalize_path(cwd)


def find_duplicate_commands(calls: list[ToolCall]) -> dict[int, int]:
    """Index of each repeated ``run_command`` call in a batch → index of its first occurrence.

    Calls are the same when command (whitespace-normalized), ``cwd`` and
    ``timeout_s`` agree; the scheduler runs the first and answers both.
    """
    first_seen: dict[tuple[str, str, str], int] = {}
    duplicates: dict[int, int] = {}
    for index, call in enumerate(calls):
        if call.name != "run_command" or not isinstance(call.arguments, dict):
            continue
        command = call.arguments.get("command")
        if not isinstance(command, str):
            continue
        key = (command_text_key(command), cwd_key(call.arguments.get("cwd")), str(call.arguments.get("timeout_s")))
        if key in first_seen:
            duplicates[index] = first_seen[key]
        else:
            first_seen[key] = index
    return duplicates
