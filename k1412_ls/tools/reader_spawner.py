"""The process that lives inside the readers' sandbox and starts ripgrep there (see ``tools.reader_sandbox``).

Run by the host as ``python -I -S -c <this file's text> <control fd> <root> <checks>`` inside the
bubblewrap sandbox of :func:`k1412_ls.tools.sandbox.reader_argv`, so every program it starts sees
exactly what a ripgrep started in a fresh sandbox would see. Standard library only: it runs without
site-packages.

Protocol, on a ``SOCK_SEQPACKET`` control socket: the host sends a JSON request ``{"argv": [...],
"cwd": "..."}`` with three descriptors (the program's stdout and stderr, and a reply socket of its
own). On the reply socket the spawner answers ``{"pid": n}`` once the program started,
``{"code": n}`` when it ended, ``{"stale": true}`` when the sandbox no longer covers what it
covered at start (the host then starts a fresh sandbox), or ``{"error": "..."}``. Any message from
the host on the reply socket, or its closing, kills the program. When the control socket closes
(the host replaced this sandbox, or ended) no new program starts; those still running finish
(a host that ended closed their reply sockets, which kills them) and the spawner exits.

Coverage is checked before every start: each ``--tmpfs`` path still shows the device it showed at
start, each path covered with ``/dev/null`` is still that character device, and the workspace
root still names the directory mounted at start (held open, so its inode cannot be reused). A
covered path replaced on the host (a rename over it detaches the mount in this namespace) or a
workspace moved away is seen, and the request answered ``stale``.
"""

from __future__ import annotations

import json
import os
import signal
import socket
import stat
import subprocess
import sys
import threading

Snapshot = list[tuple[int, int]]


def _snapshot(tmpfs: list[str], null: list[str], root: str) -> Snapshot | None:
    """What the covered paths and the root look like now; None when something is no longer covered."""
    out: Snapshot = []
    try:
        for path in tmpfs:
            info = os.lstat(path)
            if not stat.S_ISDIR(info.st_mode):
                return None
            out.append((info.st_dev, info.st_ino))
        for path in null:
            info = os.lstat(path)
            if not stat.S_ISCHR(info.st_mode):
                return None
            out.append((info.st_rdev, 0))
        info = os.stat(root)
    except OSError:
        return None
    out.append((info.st_dev, info.st_ino))
    return out


def _covered_at_start(tmpfs: list[str], null: list[str]) -> bool:
    """Every ``--tmpfs`` path is a mount of its own and every ``/dev/null`` cover is /dev/null."""
    try:
        null_dev = os.stat("/dev/null").st_rdev
        for path in tmpfs:
            if os.lstat(path).st_dev == os.lstat(os.path.dirname(path) or "/").st_dev:
                return False
        return all(os.lstat(path).st_rdev == null_dev for path in null)
    except OSError:
        return False


class Spawner:
    """Starts one program per request, after checking the sandbox still covers what it did."""

    def __init__(self, root: str, tmpfs: list[str], null: list[str]) -> None:
        self.root = root
        self.tmpfs = tmpfs
        self.null = null
        self.root_fd = os.open(root, os.O_RDONLY | os.O_DIRECTORY)  # pins the directory mounted at start
        held = os.fstat(self.root_fd)
        base = _snapshot(tmpfs, null, root)
        if base is None or not _covered_at_start(tmpfs, null) or base[-1] != (held.st_dev, held.st_ino):
            raise OSError("the sandbox does not cover what it should")
        self.baseline = base
        self.lock = threading.Lock()
        self.watchers: list[threading.Thread] = []

    def serve(self, request: dict[str, object], fds: list[int]) -> None:
        """Start the program here (no thread start before it), then watch it from a thread of its own."""
        out_fd, err_fd, reply_fd = fds
        reply = socket.socket(fileno=reply_fd)
        try:
            proc = self._start(request, out_fd, err_fd, reply)
        except OSError:
            proc = None  # the host went away: nothing to answer
        if proc is None:
            reply.close()
            return
        watcher = threading.Thread(target=self._watch, args=(proc, reply), daemon=True)
        with self.lock:
            self.watchers = [w for w in self.watchers if w.is_alive()]
            self.watchers.append(watcher)
        watcher.start()

    def _start(self, request: dict[str, object], out_fd: int, err_fd: int,
               reply: socket.socket) -> subprocess.Popen[bytes] | None:
        try:
            if _snapshot(self.tmpfs, self.null, self.root) != self.baseline:
                reply.send(b'{"stale": true}')
                return None
            argv = [str(part) for part in request["argv"]]  # type: ignore[attr-defined]
            # Device files cannot be opened in the sandbox (its mounts are nodev): stdin is an empty pipe.
            stdin, feed = os.pipe()
            os.close(feed)
            try:
                proc = subprocess.Popen(argv, cwd=str(request["cwd"]), stdin=stdin, stdout=out_fd, stderr=err_fd,
                                        start_new_session=True)
            finally:
                os.close(stdin)
        except OSError as exc:
            reply.send(json.dumps({"error": f"{exc.strerror or exc}"}).encode())
            return None
        finally:
            os.close(out_fd)
            os.close(err_fd)
        try:
            reply.send(json.dumps({"pid": proc.pid}).encode())
        except OSError:
            proc.kill()  # the host gave up on it already
        return proc

    def _watch(self, proc: subprocess.Popen[bytes], reply: socket.socket) -> None:
        pidfd = os.pidfd_open(proc.pid)  # signals reach this child even once its pid is free again
        killer = threading.Thread(target=self._kill_on_word, args=(reply, pidfd), daemon=True)
        try:
            killer.start()
            code = proc.wait()
            reply.send(json.dumps({"code": code}).encode())
        except OSError:
            pass  # the host went away: nothing to answer
        finally:
            if proc.returncode is None:
                _kill(pidfd)
                proc.wait()
            if killer.is_alive():
                reply.shutdown(socket.SHUT_RDWR)
                killer.join()
            os.close(pidfd)
            reply.close()

    @staticmethod
    def _kill_on_word(reply: socket.socket, pidfd: int) -> None:
        try:
            reply.recv(64)  # "kill", or the host closing the socket: either way the program must stop
        except OSError:
            pass
        _kill(pidfd)

    def finish(self) -> None:
        """Let every program still running end (each is killed when its host side lets go of it)."""
        with self.lock:
            watchers = list(self.watchers)
        for watcher in watchers:
            watcher.join()


def _kill(pidfd: int) -> None:
    try:
        signal.pidfd_send_signal(pidfd, signal.SIGKILL)
    except OSError:
        pass  # it has ended already


def main(argv: list[str]) -> int:
    control = socket.socket(fileno=int(argv[1]))
    checks = json.loads(argv[3])
    try:
        spawner = Spawner(argv[2], list(checks["tmpfs"]), list(checks["null"]))
    except OSError:
        control.send(b"unfit")
        return 1
    control.send(b"ready")
    try:
        while True:
            message, fds, _flags, _addr = socket.recv_fds(control, 1 << 20, 3)
            if not message:
                break
            if len(fds) != 3:
                for fd in fds:
                    os.close(fd)
                continue
            spawner.serve(json.loads(message), fds)
    finally:
        spawner.finish()
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
