"""With the network off, a command cannot make unix sockets, so no host socket is reachable through a path.

Attack: a host process starts listening on a unix socket in a directory the command can see *after* the
command started (so no listing at start can cover it), and the command connects to it.
"""

from __future__ import annotations

import socket
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
)
from k1412_ls.tools.sandbox.seccomp import network_off_filter

pytestmark = pytest.mark.skipif(not bubblewrap().active or network_namespace_problem() is not None
                                or network_off_filter() is None,
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


def test_filters_exist_for_the_supported_machines_only() -> None:
    for machine in ("x86_64", "aarch64"):
        program = network_off_filter(machine)
        assert program is not None and len(program) % 8 == 0 and len(program) // 8 < 64
    assert network_off_filter("riscv64") is None
