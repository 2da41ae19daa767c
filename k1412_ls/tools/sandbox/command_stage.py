"""The process that holds a command's sandbox open until the command is known (see ``tools.sandbox.warm_command``).

Run by the host as ``python -I -S <this file> <control fd> <root>`` inside a bubblewrap sandbox built
with the very flags a command would get, behind the same launcher (cgroup, limits). Standard library
only, and only its cheapest modules (no ``socket``, ``json`` or ``subprocess``: they would double the
time it takes to be ready). It serves exactly one command, then becomes it.

Protocol, on a ``SOCK_SEQPACKET`` control socket, every message ``marshal``-encoded by the same
interpreter: the host first sends the paths the flags cover (``{"tmpfs": [...], "null": [...]}``).
The stage checks that every cover is in place (each ``--tmpfs`` path a mount of its own, each
``/dev/null`` cover the null device), notes what they and the workspace root look like
(``tools.sandbox.covers``) and says ``ready``. The host then sends one request ``{"argv": [...],
"env": {...}, "cwd": "...", "fds": [n, ...]}`` with the descriptors the command gets (placed at the
numbers in ``fds``). The stage checks again that nothing it covered was replaced since it started (a
rename over a covered path on the host detaches the cover in this namespace), changes to ``cwd``,
answers ``go`` and execs the command with exactly ``env``; or it answers ``stale`` and exits, and the
host starts the command in a fresh sandbox. The control socket is closed before the command runs.
Without a request within :data:`IDLE_S`, or when the host closes the socket, it exits.
"""

from __future__ import annotations

import _socket
import fcntl
import marshal
import os
import select
import signal
import sys
from typing import Any

if __package__:
    from k1412_ls.tools.sandbox.covers import covered_at_start, snapshot
    from k1412_ls.tools.sandbox.landlock import restrict_writes
else:  # run as a script in the sandbox: the sibling module, by path (the package is not importable there)
    sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
    from covers import covered_at_start, snapshot  # type: ignore[no-redef]
    from landlock import restrict_writes  # type: ignore[no-redef]

IDLE_S = 300.0
HIGH_FD = 1024  # the stage's own descriptors move above every number a command is given
MAX_FDS = 16
MAX_MESSAGE = 1 << 20
_INT = 4  # bytes per descriptor in SCM_RIGHTS


def _high(fd: int) -> int:
    moved = fcntl.fcntl(fd, fcntl.F_DUPFD_CLOEXEC, HIGH_FD)
    os.close(fd)
    return moved


def _receive(control: Any) -> tuple[Any, list[int]]:
    """One message and the descriptors that came with it (``socket.recv_fds`` without importing ``socket``)."""
    data, ancillary, _flags, _addr = control.recvmsg(MAX_MESSAGE, _socket.CMSG_SPACE(MAX_FDS * _INT))
    fds: list[int] = []
    for level, kind, payload in ancillary:
        if level == _socket.SOL_SOCKET and kind == _socket.SCM_RIGHTS:
            usable = len(payload) - len(payload) % _INT
            fds += [int.from_bytes(payload[i:i + _INT], sys.byteorder, signed=True) for i in range(0, usable, _INT)]
    if not data:
        return None, fds
    return marshal.loads(data), fds


def _place(received: list[int], targets: list[int]) -> None:
    """Each received descriptor at its number, inheritable; nothing else of the stage's stays open."""
    moved = [_high(fd) for fd in received]
    for fd, target in zip(moved, targets, strict=True):
        os.dup2(fd, target, inheritable=True)
        os.close(fd)


def _wait(control: Any, seconds: float) -> bool:
    waiting = select.poll()  # (select() cannot watch a descriptor above 1023)
    waiting.register(control.fileno(), select.POLLIN)
    return bool(waiting.poll(int(seconds * 1000)))


def serve(control: Any, root: str) -> int:
    checks, _none = _receive(control)
    tmpfs = [str(p) for p in checks["tmpfs"]]
    writable = checks.get("writable")  # None: no Landlock on this kernel (tools.sandbox.landlock)
    null = [str(p) for p in checks["null"]]
    baseline = snapshot(tmpfs, null, root)
    if baseline is None or not covered_at_start(tmpfs, null):
        control.send(b"unfit")
        return 1
    control.send(b"ready")
    if not _wait(control, IDLE_S):
        return 0  # never used: the host moved on
    try:
        request, fds = _receive(control)
    except (OSError, EOFError, ValueError, TypeError):
        return 0
    if request is None:
        return 0
    try:
        argv = [str(part) for part in request["argv"]]
        env = {str(k): str(v) for k, v in request["env"].items()}
        cwd = str(request["cwd"])
        targets = [int(n) for n in request["fds"]]
        if len(targets) != len(fds) or not argv or any(not 2 < n < HIGH_FD for n in targets):
            raise ValueError("descriptors and numbers do not match")
        if snapshot(tmpfs, null, root) != baseline:
            raise ValueError("a cover was replaced")
        os.chdir(cwd)
        _place(fds, targets)
        if writable is not None:
            restrict_writes([str(p) for p in writable])  # as a fresh sandbox's helper does
    except (OSError, ValueError, KeyError, TypeError, AttributeError):
        control.send(b"stale")
        return 0
    control.send(b"go")
    control.close()
    for sig in (signal.SIGPIPE, signal.SIGXFSZ):  # ignored by the interpreter; an ignored signal survives exec
        signal.signal(sig, signal.SIG_DFL)
    try:
        os.execvpe(argv[0], argv, env)
    except OSError as exc:
        os.write(2, f"k1412: {argv[0]}: {exc.strerror or exc}\n".encode(errors="replace"))
    return 127


def main(argv: list[str]) -> int:
    control = _socket.socket(_socket.AF_UNIX, _socket.SOCK_SEQPACKET, 0, _high(int(argv[1])))
    return serve(control, argv[2])


if __name__ == "__main__":
    sys.exit(main(sys.argv))
