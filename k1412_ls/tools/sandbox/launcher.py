"""How every child K1412 starts begins: one trusted ``/bin/sh`` that enters the command's pids cgroup,
sets the resource limits and execs the rest (the sandbox, or one of K1412's own helpers)."""

from __future__ import annotations

import os
import resource
from collections.abc import Callable

from k1412_ls.tools.sandbox.trusted import trusted_program

GIB = 1024**3
# Generous enough for compilers and test suites, small enough to stop a runaway allocation or file.
LIMIT_ADDRESS_SPACE = 8 * GIB
LIMIT_FILE_SIZE = 1 * GIB
NPROC_HEADROOM = 2048


def _nproc_limit() -> int | None:
    """A per-user process cap with headroom, or None for root (the kernel ignores it for root)."""
    if os.geteuid() == 0:
        return None
    uid = os.geteuid()
    count = 0
    with os.scandir("/proc") as entries:
        for entry in entries:
            if entry.name.isdigit():
                try:
                    count += entry.stat().st_uid == uid
                except OSError:
                    continue
    limit = count + NPROC_HEADROOM
    hard = resource.getrlimit(resource.RLIMIT_NPROC)[1]
    return limit if hard == resource.RLIM_INFINITY else min(limit, hard)


def _limits() -> dict[int, int]:
    limits = {
        resource.RLIMIT_AS: LIMIT_ADDRESS_SPACE,
        resource.RLIMIT_FSIZE: LIMIT_FILE_SIZE,
        resource.RLIMIT_CORE: 0,
    }
    nproc = _nproc_limit()
    if nproc is not None:
        limits[resource.RLIMIT_NPROC] = nproc
    # Never raise a limit the server itself already runs under.
    for which, value in list(limits.items()):
        hard = resource.getrlimit(which)[1]
        if hard != resource.RLIM_INFINITY and hard < value:
            limits[which] = hard
    return limits


# dash/bash ``ulimit`` flags and the unit each takes (``-f`` counts 512-byte blocks in POSIX sh, KiB in bash:
# both are given the value for POSIX sh, which is what /bin/sh is on the systems that have dash).
_ULIMIT_FLAGS = {
    resource.RLIMIT_AS: ("-v", 1024), resource.RLIMIT_FSIZE: ("-f", 512),
    resource.RLIMIT_CORE: ("-c", 1), resource.RLIMIT_NPROC: ("-p", 1),
}


def launcher(argv: list[str], cgroup_file: str | None) -> tuple[list[str], Callable[[], None] | None]:
    """``argv`` started by one trusted ``/bin/sh`` that enters the cgroup, sets the limits and execs it.

    One small exec instead of a chain of helpers; without a trusted ``sh`` the
    limits are set in ``preexec_fn`` (and there is no cgroup to enter). The
    shell moves itself (``0``) through ``cgroup_file`` (``ProcessCap.prepare``);
    when that write fails, nothing after it runs.
    """
    limits = _limits()
    sh = trusted_program("sh")
    if sh is None or os.path.basename(os.path.realpath(sh)) not in ("dash", "bash", "sh"):
        def apply() -> None:
            for which, value in limits.items():
                resource.setrlimit(which, (value, value))

        return argv, apply
    dash = os.path.basename(os.path.realpath(sh)) == "dash"
    steps = ['echo 0 > "$0"'] if cgroup_file else []
    for which, value in limits.items():
        flag, unit = _ULIMIT_FLAGS[which]
        if which == resource.RLIMIT_NPROC and not dash:
            flag = "-u"
        if which == resource.RLIMIT_FSIZE and not dash:
            unit = 1024
        steps.append(f"ulimit {flag} {value // unit}")
    steps.append('exec "$@"')
    return [sh, "-c", " && ".join(steps), cgroup_file or "k1412-launcher", *argv], None


__all__ = ["LIMIT_ADDRESS_SPACE", "LIMIT_FILE_SIZE", "NPROC_HEADROOM", "launcher"]
