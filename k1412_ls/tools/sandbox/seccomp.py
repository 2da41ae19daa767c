"""The system-call filter every sandboxed command runs under: an allow list (``tools.sandbox.syscall_policy``).

Built by the system's libseccomp (``tools.sandbox.libseccomp``) for this machine's architecture alone
— x86-64 or aarch64; a 32-bit (i386, arm) or x32 call from such a program kills it — once per
process and per network setting, and handed to bubblewrap as ``--seccomp FD``: bubblewrap loads it
after it has made every namespace and mount, right before it executes the command, so the command
and everything it starts are bound by it. The kept sandboxes (``tools.sandbox.warm_command``, the
readers' ``tools.sandbox.reader_sandbox``) get the same filter.

Where the filter cannot be built (no libseccomp 2.5+, another architecture) commands are refused with
one sentence, as without a bubblewrap: :func:`filter_problem`.
"""

from __future__ import annotations

import functools
import os
import platform

from k1412_ls.tools.sandbox import syscall_policy
from k1412_ls.tools.sandbox.libseccomp import ARCHES, Unavailable, export


def command_filter(network: bool, machine: str | None = None) -> bytes:
    """The BPF program for a command with the network on or off (raises :class:`Unavailable`)."""
    return _filter_for(machine or platform.machine(), network)


@functools.lru_cache(maxsize=8)
def _filter_for(machine: str, network: bool) -> bytes:
    arch = ARCHES.get(machine)
    if arch is None:
        raise Unavailable(f"K1412's system-call filter is built for x86-64 and aarch64, and this machine is {machine}")
    return export(arch, syscall_policy.DEFAULT_ACTION, syscall_policy.rules(network))


@functools.lru_cache(maxsize=1)
def filter_problem() -> str | None:
    """None when this machine gets the filter, else why not (one clause, for a refusal)."""
    try:
        command_filter(False)
        command_filter(True)
    except Unavailable as exc:
        return str(exc)
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


__all__ = ["Unavailable", "command_filter", "filter_fd", "filter_problem"]
