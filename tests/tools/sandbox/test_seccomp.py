"""With the network off, no socket path outside the command is reachable, by any route.

Attacks: a host process starts listening on a unix socket in a directory the command can see *after*
the command started (so no listing at start could cover it), and the command connects to it; and a
canary socket the test binds in the workspace, reached through every route there is to a socket
path (a socket of its own, a datagram socketpair, a connected pair re-addressed, io_uring) or to the
host outside the network namespace (vsock, netlink). Each with its positive control: the same attack
with the network on, or outside the sandbox, reaches the canary.
"""

from __future__ import annotations

import socket
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

from k1412_ls.tools.files.documents import DiskDocumentStore
from k1412_ls.tools.files.workspace import Workspace
from k1412_ls.tools.ports import RunServices
from k1412_ls.tools.processes.run_command import RunCommandArgs, run_command
from k1412_ls.tools.registry import ToolContext
from k1412_ls.tools.sandbox.command_sandbox import (
    RunSandbox,
    SandboxPolicy,
    bubblewrap,
    network_namespace_problem,
    reader_argv,
)
from k1412_ls.tools.sandbox.reader_sandbox import close_reader_sandbox, start_reader
from k1412_ls.tools.sandbox.seccomp import filter_problem

pytestmark = pytest.mark.skipif(not bubblewrap().active or network_namespace_problem() is not None
                                or filter_problem() is not None,
                                reason="bubblewrap with network namespaces and a seccomp filter for this machine needed")

POLL = ("python3 -c \"import socket, time, os\n"
        "open('started', 'w').close()\n"
        "end = time.time() + 5\n"
        "while time.time() < end:\n"
        "    try:\n"
        "        s = socket.socket(socket.AF_UNIX); s.connect('late.sock'); s.sendall(b'LEAK'); print('CONNECTED'); break\n"
        "    except OSError as e:\n"
        "        err = e; time.sleep(0.05)\n"
        "else:\n"
        "    print('never:', err)\n\"")


def context(ws: Path, network: bool) -> ToolContext:
    return ToolContext(workspace=Workspace(ws), documents=DiskDocumentStore(ws), run_id="r-seccomp",
                       services=RunServices(sandbox=RunSandbox(SandboxPolicy(network=network))))


def late_listener(ws: Path, hits: list[bytes]) -> threading.Thread:
    def serve() -> None:
        end = time.monotonic() + 20
        while not (ws / "started").exists() and time.monotonic() < end:
            time.sleep(0.02)
        time.sleep(0.3)
        server = socket.socket(socket.AF_UNIX)
        server.bind(str(ws / "late.sock"))
        server.listen(1)
        server.settimeout(6)
        try:
            conn, _ = server.accept()
            hits.append(conn.recv(16))
            conn.close()
        except OSError:
            pass
        finally:
            server.close()

    thread = threading.Thread(target=serve, daemon=True)
    thread.start()
    return thread


@pytest.mark.e2e
@pytest.mark.parametrize("network", [False, True], ids=["network-off", "control-network-on"])
def test_a_host_socket_made_after_the_command_started_is_out_of_reach(ws: Path, network: bool) -> None:
    hits: list[bytes] = []
    listener = late_listener(ws, hits)
    done = run_command(RunCommandArgs(command=POLL, timeout_s=30), context(ws, network))
    listener.join(10)
    if network:  # positive control: without the filter the late socket is reached
        assert hits == [b"LEAK"] and "CONNECTED" in done.data["output"], done.data
    else:
        assert hits == [] and "never: [Errno 1] Operation not permitted" in done.data["output"], done.data


def test_pipes_socketpairs_and_the_commands_own_loopback_still_work(ws: Path) -> None:
    code = ("import socket, threading, multiprocessing\n"
            "a, b = socket.socketpair(); a.sendall(b'x'); assert b.recv(1) == b'x'\n"
            "r, w = multiprocessing.Pipe(); w.send(1); assert r.recv() == 1\n"
            "srv = socket.create_server(('127.0.0.1', 0)); port = srv.getsockname()[1]\n"
            "threading.Thread(target=lambda: srv.accept()[0].sendall(b'pong'), daemon=True).start()\n"
            "print(socket.create_connection(('127.0.0.1', port)).recv(4).decode())\n")
    (ws / "ipc.py").write_text(code)
    done = run_command(RunCommandArgs(command="python3 ipc.py"), context(ws, False))
    assert done.ok and done.data["output"].strip() == "pong", done.data


ROUTES = r"""
import ctypes, errno, os, socket, sys
route, stream_path, dgram_path = sys.argv[1:4]
libc = ctypes.CDLL(None, use_errno=True)
IO_URING_SETUP = 425


def attempt():
    if route == "unix-socket-connect":
        s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM); s.connect(stream_path); s.sendall(b"LEAK")
    elif route == "unix-socket-sendto":
        socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM).sendto(b"LEAK", dgram_path)
    elif route in ("dgram-pair-sendto", "raw-pair-sendto"):
        kind = socket.SOCK_DGRAM if route.startswith("dgram") else socket.SOCK_RAW
        a, _b = socket.socketpair(socket.AF_UNIX, kind); a.sendto(b"LEAK", dgram_path)
    elif route == "dgram-pair-connect":
        a, _b = socket.socketpair(socket.AF_UNIX, socket.SOCK_DGRAM); a.connect(dgram_path); a.send(b"LEAK")
    elif route == "stream-pair-connect":
        a, _b = socket.socketpair(socket.AF_UNIX, socket.SOCK_STREAM); a.shutdown(socket.SHUT_RDWR)
        a.connect(stream_path); a.sendall(b"LEAK")
    elif route == "stream-pair-sendto":
        a, _b = socket.socketpair(socket.AF_UNIX, socket.SOCK_STREAM); a.sendto(b"LEAK", dgram_path)
    elif route == "seqpacket-pair-sendmsg":
        a, b = socket.socketpair(socket.AF_UNIX, socket.SOCK_SEQPACKET); a.sendmsg([b"LEAK"], [], 0, dgram_path)
        assert b.recv(8) == b"LEAK"  # the address is ignored: the message went to the pair's other end
    elif route == "io-uring":
        params = ctypes.create_string_buffer(120)
        fd = libc.syscall(IO_URING_SETUP, 8, params)
        if fd < 0:
            raise OSError(ctypes.get_errno(), os.strerror(ctypes.get_errno()))
    elif route == "vsock":
        socket.socket(40, socket.SOCK_STREAM)
    elif route == "netlink-sock-diag":
        socket.socket(socket.AF_NETLINK, socket.SOCK_RAW, 4)
    elif route == "netlink-uevent":
        socket.socket(socket.AF_NETLINK, socket.SOCK_RAW, 15)


try:
    attempt()
    print("DONE")
except OSError as exc:
    print("refused:", errno.errorcode.get(exc.errno, exc.errno))
"""


class Canary:
    """A stream listener and a datagram socket in the workspace, counting what reaches them."""

    def __init__(self, ws: Path) -> None:
        self.stream_path = str(ws / "canary-stream.sock")
        self.dgram_path = str(ws / "canary-dgram.sock")
        self.hits: list[bytes] = []
        self.stream = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        self.stream.bind(self.stream_path)
        self.stream.listen(4)
        self.stream.settimeout(0.2)
        self.dgram = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
        self.dgram.bind(self.dgram_path)
        self.dgram.settimeout(0.2)

    def collect(self) -> list[bytes]:
        try:
            conn, _ = self.stream.accept()
            conn.settimeout(1)
            self.hits.append(conn.recv(16))
            conn.close()
        except OSError:
            pass
        try:
            self.hits.append(self.dgram.recv(16))
        except OSError:
            pass
        hits, self.hits = self.hits, []
        return hits

    def close(self) -> None:
        self.stream.close()
        self.dgram.close()


def attack(ws: Path, route: str, canary: Canary, where: str) -> tuple[str, list[bytes]]:
    """Run the route in a network-off sandbox, a network-on one, or on the host; its output and the canary's hits."""
    script = ws / "routes.py"
    script.write_text(ROUTES)
    argv = [sys.executable if where == "host" else "python3", str(script), route, canary.stream_path, canary.dgram_path]
    if where == "host":
        out = subprocess.run(argv, capture_output=True, text=True, timeout=30, check=False).stdout
    else:
        done = run_command(RunCommandArgs(command=" ".join(argv), timeout_s=30), context(ws, where == "network-on"))
        out = str(done.data["output"])
    return out.strip(), canary.collect()


@pytest.fixture
def canary(ws: Path) -> object:
    made = Canary(ws)
    yield made
    made.close()


@pytest.mark.parametrize("route", ["unix-socket-connect", "unix-socket-sendto", "dgram-pair-sendto",
                                   "dgram-pair-connect", "raw-pair-sendto"])
def test_unix_socket_routes_to_a_socket_path(ws: Path, canary: Canary, route: str) -> None:
    control, reached = attack(ws, route, canary, "network-on")
    assert control == "DONE" and reached == [b"LEAK"], (control, reached)  # the route works without the rule
    out, reached = attack(ws, route, canary, "network-off")
    assert out == "refused: EPERM" and reached == [], (out, reached)


@pytest.mark.parametrize(("route", "kernel_says"), [("stream-pair-connect", "refused: EISCONN"),
                                                    ("stream-pair-sendto", "refused: EISCONN"),
                                                    ("seqpacket-pair-sendmsg", "DONE")])
def test_the_socketpairs_left_cannot_be_readdressed(ws: Path, canary: Canary, route: str, kernel_says: str) -> None:
    # The allowed pairs are connected for good: the kernel itself refuses or ignores a new address (control:
    # a datagram pair, refused above, reaches the canary with the network on).
    control, reached = attack(ws, "dgram-pair-sendto", canary, "network-on")
    assert control == "DONE" and reached == [b"LEAK"]
    for where in ("network-off", "host"):
        out, reached = attack(ws, route, canary, where)
        assert out == kernel_says and reached == [], (where, out, reached)


@pytest.mark.parametrize(("route", "refusal"), [("io-uring", "EPERM"), ("vsock", "EAFNOSUPPORT"),
                                               ("netlink-sock-diag", "EPROTONOSUPPORT"),
                                               ("netlink-uevent", "EPROTONOSUPPORT")])
def test_routes_around_the_socket_checks_are_closed(ws: Path, canary: Canary, route: str, refusal: str) -> None:
    control, _ = attack(ws, route, canary, "host")
    if control != "DONE":
        pytest.skip(f"{route} does not work on this host either ({control}): nothing to show")
    for where in ("network-off", "network-on"):
        out, reached = attack(ws, route, canary, where)
        assert out == f"refused: {refusal}" and reached == [], (where, out)


def test_the_readers_sandbox_runs_under_the_same_filter(ws: Path) -> None:
    probe = ("import socket\ntry:\n    socket.socket(socket.AF_UNIX); print('made')\n"
             "except OSError as exc:\n    print('refused', exc.errno)\n")
    wrapped = reader_argv([sys.executable, "-I", "-c", probe], ws, RunSandbox().fixed())
    assert wrapped is not None
    env = {"PATH": "/usr/bin:/bin"}
    # Control: the same bubblewrap flags without the filter let the program make a unix socket.
    bare = subprocess.run(wrapped, cwd=ws, env=env, capture_output=True, text=True, timeout=30, check=False)
    assert bare.stdout.strip() == "made", bare
    close_reader_sandbox()
    try:
        for fresh in (True, False):  # a new kept sandbox, then the same one again
            proc = start_reader(wrapped, ws, env, fresh=fresh)
            assert proc.stdout is not None
            out = proc.stdout.read().decode()
            proc.wait()
            assert out.strip() == "refused 1", out
    finally:
        close_reader_sandbox()
