"""The few calls of the system's libseccomp (``libseccomp.so.2``) that turn a rule list into a BPF program.

libseccomp is what systemd, Flatpak, runc (Docker, Podman) and Chromium's Linux tooling use to build their
filters: it knows every architecture's system-call numbers, the x32 and compat ABIs, and how to compare
64-bit arguments with 32-bit BPF. K1412 never loads a filter itself: it *exports* the program
(``seccomp_export_bpf``) and hands it to bubblewrap's ``--seccomp``, which loads it right before it
runs the command. The Python bindings libseccomp itself ships are not on PyPI, and the ctypes binding
that is (``pyseccomp``) has had no release since 2021, so the ten calls K1412 needs are bound here.

:class:`Unavailable` is raised with one sentence when the library is missing or refuses a rule; the
caller refuses commands with it (fail closed, like a missing bubblewrap).
"""

from __future__ import annotations

import ctypes
import ctypes.util
import functools
import os
from collections.abc import Iterable
from typing import NamedTuple

# Actions (seccomp.h).
ACT_KILL_PROCESS = 0x80000000
ACT_ALLOW = 0x7FFF0000


def act_errno(errno_value: int) -> int:
    """The action "fail with ``errno_value``"."""
    return 0x00050000 | (errno_value & 0xFFFF)


# Comparisons (enum scmp_compare).
CMP_EQ = 4
CMP_GT = 6
CMP_MASKED_EQ = 7

# Architectures: the kernel's AUDIT_ARCH values, which libseccomp uses as its tokens.
ARCH_X86_64 = 0xC000003E
ARCH_AARCH64 = 0xC00000B7
ARCHES = {"x86_64": ARCH_X86_64, "amd64": ARCH_X86_64, "aarch64": ARCH_AARCH64, "arm64": ARCH_AARCH64}

# Filter attributes (enum scmp_filter_attr).
_ATTR_ACT_BADARCH = 2
_ATTR_CTL_OPTIMIZE = 8
_NR_ERROR = -1  # __NR_SCMP_ERROR: a name libseccomp does not know


class Unavailable(Exception):
    """libseccomp cannot build the filter here; the message is one sentence for the user."""


class Compare(NamedTuple):
    """One argument comparison: ``args[index] <op> value`` (``MASKED_EQ``: ``args[index] & mask == value``)."""

    index: int
    op: int
    value: int
    mask: int = 0


class _Arg(ctypes.Structure):
    _fields_ = [("arg", ctypes.c_uint), ("op", ctypes.c_int), ("datum_a", ctypes.c_uint64),
                ("datum_b", ctypes.c_uint64)]


class _Version(ctypes.Structure):
    _fields_ = [("major", ctypes.c_uint), ("minor", ctypes.c_uint), ("micro", ctypes.c_uint)]


@functools.lru_cache(maxsize=1)
def _library() -> ctypes.CDLL:
    name = ctypes.util.find_library("seccomp") or "libseccomp.so.2"
    try:
        lib = ctypes.CDLL(name, use_errno=True)
    except OSError as exc:
        raise Unavailable("the system-call filter needs libseccomp (libseccomp.so.2, the libseccomp2 package), "
                          f"which is not installed here ({exc})") from None
    lib.seccomp_version.restype = ctypes.POINTER(_Version)
    lib.seccomp_init.restype = ctypes.c_void_p
    lib.seccomp_init.argtypes = [ctypes.c_uint32]
    lib.seccomp_release.argtypes = [ctypes.c_void_p]
    lib.seccomp_arch_add.argtypes = [ctypes.c_void_p, ctypes.c_uint32]
    lib.seccomp_arch_remove.argtypes = [ctypes.c_void_p, ctypes.c_uint32]
    lib.seccomp_arch_native.restype = ctypes.c_uint32
    lib.seccomp_attr_set.argtypes = [ctypes.c_void_p, ctypes.c_int, ctypes.c_uint32]
    lib.seccomp_syscall_resolve_name.argtypes = [ctypes.c_char_p]
    lib.seccomp_syscall_resolve_name_arch.argtypes = [ctypes.c_uint32, ctypes.c_char_p]
    lib.seccomp_rule_add_array.argtypes = [ctypes.c_void_p, ctypes.c_uint32, ctypes.c_int, ctypes.c_uint,
                                           ctypes.POINTER(_Arg)]
    lib.seccomp_export_bpf.argtypes = [ctypes.c_void_p, ctypes.c_int]
    version = lib.seccomp_version().contents
    if (version.major, version.minor) < (2, 5):
        raise Unavailable(f"the system-call filter needs libseccomp 2.5 or newer, and this machine has "
                          f"{version.major}.{version.minor}.{version.micro}")
    return lib


def version() -> str:
    """The libseccomp version in use (raises :class:`Unavailable`)."""
    found = _library().seccomp_version().contents
    return f"{found.major}.{found.minor}.{found.micro}"


def syscall_number(arch: int, name: str) -> int | None:
    """``name``'s number on ``arch``, or None where it does not exist there (tests emulate filters with it)."""
    number = int(_library().seccomp_syscall_resolve_name_arch(arch, name.encode()))
    return None if number < 0 else number


class Rule(NamedTuple):
    """``action`` for system call ``name`` when every comparison holds (none: always)."""

    name: str
    action: int
    compares: tuple[Compare, ...] = ()


def export(arch: int, default: int, rules: Iterable[Rule]) -> bytes:
    """The classic-BPF program for ``arch`` alone: ``rules``, else ``default``; any other ABI kills the process.

    Names ``arch`` does not have are skipped (``open`` on aarch64); a name libseccomp does not know at all
    (a system call newer than it) is left to ``default``. Rules must not overlap with different actions.
    """
    lib = _library()
    ctx = lib.seccomp_init(default)
    if not ctx:
        raise Unavailable("libseccomp could not start a filter")
    try:
        native = lib.seccomp_arch_native()
        if arch != native:
            _check(lib.seccomp_arch_add(ctx, arch), "add the architecture")
            _check(lib.seccomp_arch_remove(ctx, native), "remove the native architecture")
        _check(lib.seccomp_attr_set(ctx, _ATTR_ACT_BADARCH, ACT_KILL_PROCESS), "set the other-ABI action")
        lib.seccomp_attr_set(ctx, _ATTR_CTL_OPTIMIZE, 2)  # a binary tree of syscalls (2.5+); a plain list otherwise
        for rule in rules:
            number = int(lib.seccomp_syscall_resolve_name(rule.name.encode()))
            if number == _NR_ERROR:
                continue
            args = (_Arg * len(rule.compares))(*(_Arg(c.index, c.op, c.mask if c.op == CMP_MASKED_EQ else c.value,
                                                      c.value if c.op == CMP_MASKED_EQ else 0)
                                                 for c in rule.compares))
            _check(lib.seccomp_rule_add_array(ctx, rule.action, number, len(rule.compares), args),
                   f"add the rule for {rule.name}")
        fd = os.memfd_create("k1412-seccomp-export", os.MFD_CLOEXEC)
        try:
            _check(lib.seccomp_export_bpf(ctx, fd), "export the filter")
            size = os.lseek(fd, 0, os.SEEK_CUR)
            return os.pread(fd, size, 0)
        finally:
            os.close(fd)
    finally:
        lib.seccomp_release(ctx)


def _check(result: int, what: str) -> None:
    if result < 0:
        raise Unavailable(f"libseccomp could not {what} ({os.strerror(-result)})")


__all__ = ["ACT_ALLOW", "ACT_KILL_PROCESS", "ARCHES", "ARCH_AARCH64", "ARCH_X86_64", "CMP_EQ", "CMP_GT",
           "CMP_MASKED_EQ", "Compare", "Rule", "Unavailable", "act_errno", "export", "syscall_number", "version"]
