"""The process that lives inside the readers' sandbox and starts ripgrep there (see ``tools.sandbox.reader_sandbox``).

Run by the host as ``python -I -S <this file> <control fd> <root> <checks>`` inside the
bubblewrap sandbox of :func:`k1412_ls.tools.sandbox.command_sandbox.reader_argv`, so every program it starts sees
exactly what a ripgrep started in a fresh sandbox would see. Standard library only: it runs without
site-packages.

Protocol, on a ``SOCK_SEQPACKET`` control socket: the host sends a JSON request ``{"argv": [...],
"cwd": "..."}`` with three descriptors (the program's stdout and stderr, and a reply socket of its
own). On the reply socket the spawner answers ``{"pid": n}`` (with the program's pidfd) once it started,
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
import select
import signal
import socket
import subprocess
import sys

if __package__:
    from k1412_ls.tools.sandbox.covers import covered_at_start, snapshot
else:  # run as a script in the sandbox: the sibling module, by path (the package is not importable there)
    sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
    from covers import covered_at_start, snapshot  # type: ignore[no-redef]


class Running:
    """One started program: its process, a descriptor that signals it safely, and the host's reply socket."""

    def __init__(self, proc: subprocess.Popen[bytes], reply: socket.socket) -> None:
        self.proc = proc
        self.pidfd = os.pidfd_open(proc.pid)  # signals reach this child even once its pid is free again
        self.reply = reply
        self.listening = True

    def kill(self) -> None:
        try:
            signal.pidfd_send_signal(self.pidfd, signal.SIGKILL)
        except OSError:
            pass  # it has ended already


class Spawner:
    """Starts one program per request, after checking the sandbox still covers what it did.

    One thread, one ``poll``: the control socket (requests), each program's reply socket (a word
    or its closing kills the program) and each program's pidfd (readable once it ended: reaped,
    its code sent). No thread is started per program, so a search costs the fewest wake-ups.
    """

    def __init__(self, root: str, tmpfs: list[str], null: list[str], control: socket.socket) -> None:
        self.root = root
        self.tmpfs = tmpfs
        self.null = null
        self.control = control
        self.root_fd = os.open(root, os.O_RDONLY | os.O_DIRECTORY)  # pins the directory mounted at start
        held = os.fstat(self.root_fd)
        base = snapshot(tmpfs, null, root)
        if base is None or not covered_at_start(tmpfs, null) or base[-1] != (held.st_dev, held.st_ino):
            raise OSError("the sandbox does not cover what it should")
        self.baseline = base
        self.poller = select.poll()
        self.by_reply: dict[int, Running] = {}
        self.by_pidfd: dict[int, Running] = {}

    def run(self) -> None:
        """Serve until the control socket closes and every program started has ended."""
        self.poller.register(self.control, select.POLLIN)
        accepting = True
        while accepting or self.by_pidfd:
            for fd, _events in self.poller.poll():
                if fd == self.control.fileno() and accepting:
                    accepting = self._request()
                    if not accepting:
                        self.poller.unregister(self.control)
                elif fd in self.by_reply:
                    running = self.by_reply.pop(fd)
                    self.poller.unregister(fd)  # once is enough: a closed socket would wake us forever
                    running.listening = False
                    running.kill()  # the host said "kill", or let go of the program
                elif fd in self.by_pidfd:
                    self._ended(self.by_pidfd.pop(fd))

    def _request(self) -> bool:
        """Take one request from the control socket; False once the host closed it."""
        message, fds, _flags, _addr = socket.recv_fds(self.control, 1 << 20, 3)
        if not message:
            for fd in fds:
                os.close(fd)
            return False
        if len(fds) != 3:
            for fd in fds:
                os.close(fd)
            return True
        out_fd, err_fd, reply_fd = fds
        reply = socket.socket(fileno=reply_fd)
        try:
            proc = self._start(json.loads(message), out_fd, err_fd, reply)
        except (OSError, ValueError):
            proc = None  # the host went away, or sent nonsense: nothing to answer
        if proc is None:
            reply.close()
            return True
        running = Running(proc, reply)
        try:  # the pidfd goes along: the host can kill the program, and see it end, without a word to us
            socket.send_fds(reply, [json.dumps({"pid": proc.pid}).encode()], [running.pidfd])
        except OSError:
            running.kill()  # the host gave up on it already
        self.by_reply[reply.fileno()] = running
        self.by_pidfd[running.pidfd] = running
        self.poller.register(reply, select.POLLIN)
        self.poller.register(running.pidfd, select.POLLIN)
        return True

    def _start(self, request: dict[str, object], out_fd: int, err_fd: int,
               reply: socket.socket) -> subprocess.Popen[bytes] | None:
        try:
            if snapshot(self.tmpfs, self.null, self.root) != self.baseline:
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
        return proc

    def _ended(self, running: Running) -> None:
        self.poller.unregister(running.pidfd)
        code = running.proc.wait()
        if running.listening:
            self.by_reply.pop(running.reply.fileno(), None)
            self.poller.unregister(running.reply)
        try:
            running.reply.send(json.dumps({"code": code}).encode())
        except OSError:
            pass  # the host went away: nothing to answer
        running.reply.close()
        os.close(running.pidfd)


def main(argv: list[str]) -> int:
    control = socket.socket(fileno=int(argv[1]))
    checks = json.loads(argv[3])
    try:
        spawner = Spawner(argv[2], list(checks["tmpfs"]), list(checks["null"]), control)
    except OSError:
        control.send(b"unfit")
        return 1
    control.send(b"ready")
    spawner.run()
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
