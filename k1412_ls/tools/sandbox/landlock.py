"""Opening files for writing only inside the command's writable trees (Linux Landlock), applied in the sandbox.

A read-only bind mount refuses writes to the *files* under it, but opening a FIFO (or a character device)
for writing is not a write to that file system: on a read-only view of a host directory a command could
still open a named pipe a host program reads from, and feed it. Landlock's ``WRITE_FILE`` right covers
every open for writing, whatever the file type; with a ruleset that handles it and allows it only beneath
the command's writable trees (the workspace, the run's ``/tmp``, ``/dev``, the directories the user or an
approval made writable), every other open for writing fails with ``EACCES``. Pipes and sockets without a
path (``/dev/stdout`` → a pipe) are not restricted by Landlock.

Moving a file to another directory (``REFER``) stays allowed everywhere (Landlock then only checks that the
move gives the file no write access it did not have); Landlock is used from ABI 2, which has that right.

Landlock must be applied after bubblewrap has built the sandbox (a Landlock-restricted process may not
mount), so it runs in the sandbox: in the stage of a kept sandbox (``tools.sandbox.command_stage``) just
before it execs the command, and for a fresh sandbox as ``python -I -S <this file> PATH… -- ARGV…``.
Standard library only, importable by path. Where the kernel has no Landlock (:func:`available` is False)
nothing is restricted, and docs/sandbox.md says what is then not contained.
"""

from __future__ import annotations

import _signal  # not ``signal``: it imports ``enum``, which doubles the helper's start
import ctypes
import os
import stat
import struct
import sys

# Same numbers on every architecture (new system calls share one table).
_CREATE_RULESET, _ADD_RULE, _RESTRICT_SELF = 444, 445, 446
_CREATE_RULESET_VERSION = 1
_RULE_PATH_BENEATH = 1
ACCESS_FS_WRITE_FILE = 1 << 1
# Moving or linking a file to another directory: the one right every Landlock ruleset denies unless a rule grants
# it (rename(2) then fails with EXDEV: git's object store, pip, mv between directories). Granted everywhere.
ACCESS_FS_REFER = 1 << 13
MIN_ABI = 2  # REFER exists from ABI 2; under ABI 1 no file could change directories, so Landlock is not used
_PR_SET_NO_NEW_PRIVS = 38
SEPARATOR = "--"


def _libc() -> ctypes.CDLL:
    libc = ctypes.CDLL(None, use_errno=True)
    libc.syscall.restype = ctypes.c_long
    return libc


def abi_version() -> int:
    """The kernel's Landlock ABI version; 0 when it has none (or it is turned off)."""
    try:
        found = int(_libc().syscall(ctypes.c_long(_CREATE_RULESET), None, ctypes.c_size_t(0),
                                    ctypes.c_uint32(_CREATE_RULESET_VERSION)))
    except OSError:
        return 0
    return max(found, 0)


def available() -> bool:
    return abi_version() >= MIN_ABI


def restrict_writes(writable: list[str]) -> None:
    """From now on (this process and what it starts) open files for writing only beneath ``writable``.

    Raises OSError when the kernel refuses the ruleset; a path in ``writable`` that does not exist is skipped.
    """
    libc = _libc()
    attr = struct.pack("=Q", ACCESS_FS_WRITE_FILE | ACCESS_FS_REFER)  # handled_access_fs (the first ABI's size)
    buf = ctypes.create_string_buffer(attr, len(attr))
    ruleset = int(libc.syscall(ctypes.c_long(_CREATE_RULESET), buf, ctypes.c_size_t(len(attr)), ctypes.c_uint32(0)))
    if ruleset < 0:
        raise OSError(ctypes.get_errno(), "landlock_create_ruleset failed")
    try:
        grants = [("/", ACCESS_FS_REFER), *((path, ACCESS_FS_WRITE_FILE | ACCESS_FS_REFER) for path in writable)]
        for path, access in dict.fromkeys(grants):
            try:
                fd = os.open(path, os.O_PATH | os.O_CLOEXEC)
            except OSError:
                continue
            try:
                if not stat.S_ISDIR(os.fstat(fd).st_mode):
                    # A writable file (not a tree): only file rights may be granted on it (REFER is for
                    # directories, and the kernel refuses the rule otherwise).
                    access &= ACCESS_FS_WRITE_FILE
                    if not access:
                        continue
                rule = ctypes.create_string_buffer(struct.pack("=Qi", access, fd), 12)
                if libc.syscall(ctypes.c_long(_ADD_RULE), ctypes.c_int(ruleset), ctypes.c_int(_RULE_PATH_BENEATH),
                                rule, ctypes.c_uint32(0)) < 0:
                    raise OSError(ctypes.get_errno(), f"landlock_add_rule failed for {path}")
            finally:
                os.close(fd)
        if libc.prctl(_PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0:
            raise OSError(ctypes.get_errno(), "PR_SET_NO_NEW_PRIVS failed")
        if libc.syscall(ctypes.c_long(_RESTRICT_SELF), ctypes.c_int(ruleset), ctypes.c_uint32(0)) < 0:
            raise OSError(ctypes.get_errno(), "landlock_restrict_self failed")
    finally:
        os.close(ruleset)


def exec_argv(python: str, writable: list[str], argv: list[str]) -> list[str]:
    """``argv`` run through this file: Landlock applied for ``writable``, then ``argv`` exec'd."""
    return [python, "-I", "-S", os.path.abspath(__file__), *writable, SEPARATOR, *argv]


def restore_signals() -> None:
    """The interpreter ignores SIGPIPE and SIGXFSZ, and an ignored signal stays ignored across ``exec``: put
    them back, so ``yes | head`` ends as it does in a shell (no "Broken pipe" message)."""
    for sig in (_signal.SIGPIPE, _signal.SIGXFSZ):
        _signal.signal(sig, _signal.SIG_DFL)


def _initial_environment() -> dict[bytes, bytes]:
    """The environment this process was started with, byte for byte (the interpreter may have added
    ``LC_CTYPE`` for its own locale coercion: the command gets exactly what bubblewrap passed)."""
    try:
        with open("/proc/self/environ", "rb") as handle:
            raw = handle.read()
    except OSError:
        return {os.fsencode(k): os.fsencode(v) for k, v in os.environ.items()}
    found: dict[bytes, bytes] = {}
    for entry in raw.split(b"\0"):
        name, sep, value = entry.partition(b"=")
        if sep and name:
            found.setdefault(name, value)
    return found


def main(args: list[str]) -> int:
    if SEPARATOR not in args:
        os.write(2, b"k1412: the landlock helper was called without a command\n")
        return 126
    cut = args.index(SEPARATOR)
    writable, argv = args[:cut], args[cut + 1:]
    try:
        restrict_writes(writable)
    except OSError as exc:
        os.write(2, f"k1412: the command was not run: its write restrictions could not be applied ({exc})\n".encode())
        return 126
    restore_signals()
    try:
        os.execvpe(argv[0], argv, _initial_environment())
    except OSError as exc:
        os.write(2, f"k1412: {argv[0]}: {exc.strerror or exc}\n".encode(errors="replace"))
    return 127


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
