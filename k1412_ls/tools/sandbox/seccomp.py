"""The system-call filter of a network-off command: no unix socket of its own making.

With the network off a command has its own network namespace, so no TCP, UDP
or abstract unix socket reaches outside. A *pathname* unix socket is reached
through the file system, though, and the sandbox shows the host's files
read-only: listing the host's listening sockets when a command starts (and
covering them) misses a socket a host process binds later, through a path
that was renamed since, or by a relative name. So the command may not create
unix sockets at all: ``socket(AF_UNIX, …)`` fails with ``EPERM``.
``socketpair`` stays allowed (pipes between a program's own processes: cargo,
libuv, Python's ``multiprocessing.Pipe``), as do TCP and UDP on the command's
own loopback (local test servers). What stops working: a unix-socket server
inside the command (Python's ``forkserver``, an asyncio unix server) — run such
work with the network on.

The filter is classic BPF handed to bubblewrap (``--seccomp FD``), which loads
it right before it starts the command. Built for x86-64 (32-bit programs on
it lose ``socketcall`` altogether) and aarch64; on other machines there is no
filter and the socket listing is the only cover (:func:`network_off_filter`
returns None and the docs say so).
"""

from __future__ import annotations

import functools
import os
import platform
import struct

# BPF opcodes (linux/filter.h) and seccomp return values (linux/seccomp.h).
_LD_W_ABS = 0x20
_JEQ_K = 0x15
_RET_K = 0x06
_ALLOW = 0x7FFF0000
_ERRNO = 0x00050000
_KILL_PROCESS = 0x80000000
_EPERM = 1
_AF_UNIX = 1
# Offsets in struct seccomp_data: nr (int), arch (u32), ip (u64), args[6] (u64, low word first on these machines).
_NR, _ARCH, _ARG0 = 0, 4, 16

_AUDIT_X86_64, _AUDIT_I386, _AUDIT_AARCH64 = 0xC000003E, 0x40000003, 0xC00000B7
_X32_BIT = 0x40000000


def _insn(code: int, k: int, jt: int = 0, jf: int = 0) -> bytes:
    return struct.pack("=HBBI", code, jt, jf, k)


def _program(native_arch: int, socket_nr: int, compat: tuple[int, int, int] | None) -> bytes:
    """``socket(AF_UNIX, …)`` → EPERM for the native ABI (and x32); the compat ABI's socket calls too."""
    deny = _insn(_RET_K, _ERRNO | _EPERM)
    allow = _insn(_RET_K, _ALLOW)
    native = [
        _insn(_LD_W_ABS, _NR),
        _insn(_JEQ_K, socket_nr, 2, 0),              # socket → check the family
        _insn(_JEQ_K, socket_nr | _X32_BIT, 1, 0),   # x32 socket (x86-64 only; never matches elsewhere)
        allow,
        _insn(_LD_W_ABS, _ARG0),
        _insn(_JEQ_K, _AF_UNIX, 0, 1),
        deny,
        allow,
    ]
    if compat is None:
        head = [_insn(_LD_W_ABS, _ARCH), _insn(_JEQ_K, native_arch, 1, 0), _insn(_RET_K, _KILL_PROCESS)]
        return b"".join(head + native)
    compat_arch, compat_socketcall, compat_socket = compat
    other = [
        _insn(_JEQ_K, compat_arch, 1, 0),            # (the accumulator still holds the arch)
        _insn(_RET_K, _KILL_PROCESS),                # an ABI the filter does not know: no syscalls at all
        _insn(_LD_W_ABS, _NR),
        _insn(_JEQ_K, compat_socketcall, 4, 0),      # socketcall multiplexes every socket call: refused
        _insn(_JEQ_K, compat_socket, 1, 0),
        allow,
        _insn(_LD_W_ABS, _ARG0),
        _insn(_JEQ_K, _AF_UNIX, 0, 1),
        deny,
        allow,
    ]
    head = [_insn(_LD_W_ABS, _ARCH), _insn(_JEQ_K, native_arch, 0, len(native))]
    return b"".join(head + native + other)


def network_off_filter(machine: str | None = None) -> bytes | None:
    """The filter for this machine, or None where K1412 has none (built once: it is asked per command)."""
    return _filter_for(machine or platform.machine())


@functools.lru_cache(maxsize=4)
def _filter_for(machine: str) -> bytes | None:
    if machine in ("x86_64", "amd64", "AMD64"):
        return _program(_AUDIT_X86_64, 41, (_AUDIT_I386, 102, 359))
    if machine in ("aarch64", "arm64"):
        return _program(_AUDIT_AARCH64, 198, None)
    return None


def filter_fd(program: bytes) -> int:
    """An inheritable descriptor holding ``program`` from its start, for ``bwrap --seccomp FD``."""
    fd = os.memfd_create("k1412-seccomp", 0)
    try:
        os.write(fd, program)
        os.lseek(fd, 0, os.SEEK_SET)
        os.set_inheritable(fd, True)
    except OSError:
        os.close(fd)
        raise
    return fd


__all__ = ["filter_fd", "network_off_filter"]
