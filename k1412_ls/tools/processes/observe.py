"""Observed exit statuses: every test runner, compiler and interpreter a command line starts reports back.

``run_command`` runs the model's line after a short bash preamble that
defines one function per observed program (``pytest``, ``python3``,
``node``, ``gcc`` …). Each function runs the real program (``command
NAME "$@"``), then writes its exit status and arguments to a descriptor
K1412 passed in, and returns the same status. Functions are exported, so
``bash -c`` strings and bash scripts the line starts report too. So in
``pytest -q || true`` or ``pytest; exit 0`` the ledger still sees pytest's
own status.

The records can only add knowledge: the gate never lets a record turn a
failure the output shows into a success, and a line that closes or moves
descriptors, names its own descriptor table, sets traps or redefines
functions is judged without them (``k1412_ls.shell`` marks it tampered).
Such a line's records are not kept as observed at all: the event says how
many were withheld and why, so a log never shows a program as observed on
the word of a line that could have written the record itself.
"""

from __future__ import annotations

import fcntl
import os
import re
import secrets
import tempfile
from collections.abc import Callable
from typing import IO, Any

from k1412_ls.shell.parse import parse_line

OBSERVED_PROGRAMS: tuple[str, ...] = (
    "python", "python3", "pytest", "py.test", "node", "npm", "npx", "yarn", "pnpm", "bun", "deno", "go", "cargo",
    "make", "gcc", "g++", "cc", "c++", "clang", "clang++", "tsc", "javac", "rustc", "ruff", "mypy", "flake8",
    "pylint", "black", "tox", "nox", "ctest", "mvn", "gradle", "jest", "vitest", "git",
)
MAX_RECORDS = 500
MAX_RECORD_CHARS = 2000
_FUNCTION = "__k1412_observe"


def preamble(fd: int) -> str:
    """Bash code that defines and exports the observing functions, writing records to ``fd``."""
    lines = [
        # `cmd || s=$?` keeps `set -e` from leaving the function before the status is written.
        f"{_FUNCTION}() {{ local __k1412_s=0; command \"$@\" || __k1412_s=$?; "
        f"{{ printf '%s' \"$__k1412_s\"; printf '\\037%q' \"$@\"; printf '\\n'; }} >&{fd} 2>/dev/null; "
        f"return $__k1412_s; }}",
    ]
    names = []
    for program in OBSERVED_PROGRAMS:
        lines.append(f"{program}() {{ {_FUNCTION} {program} \"$@\"; }}")
        names.append(program)
    lines.append(f"export -f {_FUNCTION} {' '.join(names)} 2>/dev/null")
    return "\n".join(lines) + "\n"


def observed_command(command: str, fd: int) -> str:
    """The line to give bash: the preamble, then the model's command exactly as written."""
    return preamble(fd) + command


def status_file() -> IO[bytes]:
    """An anonymous file for the records (no path a command could name), at an unpredictable descriptor.

    A random descriptor number (100–899, the lowest free one from there) means
    a command cannot write forged records to a well-known number; finding it
    takes looking at its own descriptors, which the shell model marks as
    tampering (``/proc/self/fd``) when the line does it.
    """
    handle = tempfile.TemporaryFile(prefix="k1412-status-")
    try:
        moved = fcntl.fcntl(handle.fileno(), fcntl.F_DUPFD_CLOEXEC, 100 + secrets.randbelow(800))
    finally:
        handle.close()
    return os.fdopen(moved, "w+b")


_QUOTED = re.compile(r"^\$'(.*)'$", re.DOTALL)


def _unquote(word: str) -> str:
    """Undo bash ``printf %q`` for the common cases (backslash escapes, ``$'…'``)."""
    match = _QUOTED.match(word)
    if match:
        try:
            return match.group(1).encode("latin-1", "backslashreplace").decode("unicode_escape")
        except (UnicodeDecodeError, UnicodeEncodeError):
            return match.group(1)
    if word == "''":
        return ""
    return re.sub(r"\\(.)", r"\1", word)


def read_records(handle: IO[bytes]) -> list[dict[str, Any]]:
    """The records a command wrote: ``[{"argv": [...], "status": int}]``, in the order programs ended."""
    handle.seek(0)
    data = handle.read(MAX_RECORDS * MAX_RECORD_CHARS).decode("utf-8", "replace")
    records: list[dict[str, Any]] = []
    for line in data.splitlines()[:MAX_RECORDS]:
        parts = line[:MAX_RECORD_CHARS].split("\x1f")
        if len(parts) < 2 or not parts[0].isdigit():
            continue
        records.append({"argv": [_unquote(p) for p in parts[1:]], "status": int(parts[0])})
    return records


def observed_facts(command: str, records: list[dict[str, Any]], redact: Callable[[str], str]) -> dict[str, Any]:
    """The ``observed`` facts of one command line: its records, or how many were withheld and why."""
    why = parse_line(command).tampered
    if why is not None and records:
        return {"observed": [], "observed_withheld": {"records": len(records), "why": why}}
    return {"observed": [{"argv": [redact(str(a)) for a in r["argv"][:40]], "status": r["status"]}
                         for r in records]}


def close_quietly(handle: IO[bytes]) -> None:
    try:
        handle.close()
    except OSError:
        pass


def fileno(handle: IO[bytes]) -> int:
    fd = handle.fileno()
    os.set_inheritable(fd, True)
    return fd
