"""What a shell command runs, as far as the evidence gate cares.

A command line is split into simple commands (on ``&&``, ``||``, ``;``,
``|``, newlines); each is reduced to its *subjects*: the script file an
interpreter runs (``file:hello.py``), the module run with ``-m``
(``prog:pytest``), or the tool and its sub-command (``prog:npm test``,
``prog:pytest``). Two commands that share a subject exercise the same thing,
which is how a later success resolves an earlier failure.

Commands are also sorted into three roles:

- ``probe``: looks without running project code (``ls``, ``cat``, ``grep``,
  ``git status``, ``echo``, ``python -c …``, ``--version``); a successful
  probe is an inspection, and a failing one (``grep`` finding nothing) is
  not a failed execution;
- ``setup``: installs things (``pip install``, ``npm ci``); its failure is
  not the work failing, its success is not the work succeeding;
- ``run``: everything else, the executions that prove or disprove the work.
"""

from __future__ import annotations

import os
import re
import shlex
from dataclasses import dataclass

PROBE_PROGRAMS: frozenset[str] = frozenset({
    "ls", "ll", "dir", "cat", "bat", "head", "tail", "less", "more", "grep", "egrep", "fgrep", "rg", "ag", "ack",
    "find", "fd", "which", "whereis", "type", "command", "test", "[", "[[", "wc", "file", "stat", "du", "df",
    "tree", "pwd", "echo", "printf", "env", "printenv", "diff", "cmp", "sha256sum", "md5sum", "realpath",
    "readlink", "basename", "dirname", "true", "false", "uname", "whoami", "id", "date", "hostname", "sort",
    "uniq", "cut", "awk", "sed", "jq", "xxd", "od", "hexdump", "nl", "column", "tr", "cd", "export", "set",
    "source", ".", "sleep", "git", "ps", "pgrep", "lsof", "free", "nproc", "locale",
})
SETUP_WORDS: frozenset[str] = frozenset({"install", "add", "ci", "sync", "uninstall", "remove", "upgrade",
                                          "update", "download", "fetch", "restore", "init", "venv"})
SETUP_PROGRAMS: frozenset[str] = frozenset({"pip", "pip3", "pipx", "npm", "yarn", "pnpm", "bun", "uv", "poetry",
                                            "cargo", "go", "gem", "bundle", "apt", "apt-get", "brew", "conda",
                                            "mamba", "composer", "dotnet", "virtualenv"})
INTERPRETERS: frozenset[str] = frozenset({
    "python", "python3", "python2", "pypy", "pypy3", "node", "nodejs", "deno", "bun", "ruby", "perl", "php",
    "bash", "sh", "zsh", "dash", "fish", "lua", "Rscript", "julia", "tsx", "ts-node", "elixir", "swift",
    "java", "groovy", "kotlin", "scala", "dotnet-script",
})
# Tools whose first positional word says what they do ("npm test" ≠ "npm install").
SUBCOMMAND_TOOLS: frozenset[str] = frozenset({
    "npm", "yarn", "pnpm", "bun", "cargo", "go", "make", "just", "uv", "poetry", "dotnet", "mvn", "gradle",
    "./gradlew", "gradlew", "docker", "docker-compose", "kubectl", "deno", "hatch", "tox", "nox", "rake",
    "bundle", "mix", "zig", "swift", "stack", "cabal",
})
WRAPPERS: frozenset[str] = frozenset({"sudo", "time", "nice", "nohup", "exec", "env", "command", "builtin",
                                      "xargs", "stdbuf", "unbuffer", "npx", "pnpx", "bunx"})
_SPLIT = re.compile(r"\s*(?:&&|\|\||;|\||\n)\s*")
_ASSIGNMENT = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*=")
_VERSIONED = re.compile(r"^(python|pypy|ruby|perl|php|node)[0-9.]*$")


@dataclass(frozen=True)
class CommandShape:
    """What a command line runs: its subjects, the files it mentions and its role."""

    command: str
    subjects: frozenset[str]
    mentions: frozenset[str]
    role: str  # "run" | "probe" | "setup"

    @property
    def is_run(self) -> bool:
        """Whether the command runs project code (not a probe, not an install)."""
        return self.role == "run"


def _words(segment: str) -> list[str]:
    try:
        return shlex.split(segment, comments=True)
    except ValueError:  # unbalanced quotes: fall back to plain whitespace
        return segment.split()


def _program(word: str) -> str:
    base = os.path.basename(word) if "/" in word and not word.startswith("./") else word
    versioned = _VERSIONED.match(base)
    return versioned.group(1) if versioned else base


def _segment_shape(words: list[str]) -> tuple[str, set[str]]:
    """(role, subjects) of one simple command."""
    while words and (_ASSIGNMENT.match(words[0]) or words[0] in WRAPPERS or words[0] == "timeout"):
        head = words.pop(0)
        if head == "timeout" and words and re.match(r"^[\d.]+[smhd]?$", words[0]):
            words.pop(0)
    if not words:
        return "probe", set()
    program = _program(words[0])
    rest = words[1:]
    if any(w in ("--version", "-V", "--help", "-h") for w in rest[:2]) and len(rest) <= 2:
        return "probe", set()
    if program in INTERPRETERS or program == "python":
        if not rest:
            return "probe", set()
        for index, word in enumerate(rest):
            if word == "-m" and index + 1 < len(rest):
                module = rest[index + 1]
                if module in ("pip", "venv", "ensurepip"):
                    return "setup", {f"prog:{module}"}
                return "run", {f"prog:{module}"}
            if word in ("-c", "-e", "--eval", "-p", "--print"):
                return "probe", {f"inline:{program}"}
            if not word.startswith("-"):
                return "run", {f"file:{word.removeprefix('./')}"}
        return "probe", set()
    if program == "git":
        return "probe", {f"prog:git {rest[0]}" if rest else "prog:git"}
    positional = [w for w in rest if not w.startswith("-")]
    if program in SETUP_PROGRAMS and positional and positional[0] in SETUP_WORDS:
        return "setup", {f"prog:{program} {positional[0]}"}
    if program in PROBE_PROGRAMS:
        return "probe", {f"prog:{program}"}
    if program.startswith("./") or "/" in program:
        return "run", {f"file:{program.removeprefix('./')}"}
    if program in SUBCOMMAND_TOOLS:
        sub = positional[0] if positional else ""
        if program in ("npm", "yarn", "pnpm", "bun") and sub == "run" and len(positional) > 1:
            sub = positional[1]
        return "run", {f"prog:{program} {sub}".rstrip()}
    return "run", {f"prog:{program}"}


def command_shape(command: str) -> CommandShape:
    """Subjects, mentioned paths and role of a shell command line."""
    subjects: set[str] = set()
    mentions: set[str] = set()
    roles: list[str] = []
    for segment in _SPLIT.split(command.strip()):
        if not segment:
            continue
        words = _words(segment)
        mentions.update(w.removeprefix("./") for w in words if "." in w or "/" in w)
        role, found = _segment_shape(list(words))
        roles.append(role)
        subjects |= found
    if "run" in roles:
        role = "run"
    elif "setup" in roles:
        role = "setup"
    else:
        role = "probe"
    return CommandShape(command, frozenset(subjects), frozenset(mentions), role)


def same_work(failed: CommandShape, later: CommandShape) -> bool:
    """Whether ``later`` re-runs what ``failed`` ran: the same command line or a shared subject."""
    if " ".join(failed.command.split()) == " ".join(later.command.split()):
        return True
    return bool({s for s in failed.subjects if not s.startswith("inline:")} & later.subjects)
