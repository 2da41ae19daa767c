"""`k1412 lsp --tcp`: the same protocol over a loopback socket, and never on other interfaces."""

from __future__ import annotations

import json
import socket
import subprocess
import sys
import time
from pathlib import Path

import pytest

pytestmark = pytest.mark.e2e


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def frame(message: dict) -> bytes:
    body = json.dumps(message).encode()
    return f"Content-Length: {len(body)}\r\n\r\n".encode() + body


def read_message(sock: socket.socket) -> dict:
    data = b""
    while b"\r\n\r\n" not in data:
        data += sock.recv(4096)
    header, _, rest = data.partition(b"\r\n\r\n")
    length = int(next(line.split(b":")[1] for line in header.split(b"\r\n") if line.lower().startswith(b"content-length")))
    while len(rest) < length:
        rest += sock.recv(65536)
    return json.loads(rest[:length])


def test_initialize_over_loopback_tcp(tmp_path: Path) -> None:
    port = free_port()
    proc = subprocess.Popen([sys.executable, "-m", "k1412_ls.cli", "lsp", "--tcp", f"127.0.0.1:{port}"],
                            stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    try:
        deadline = time.monotonic() + 20
        while True:
            try:
                sock = socket.create_connection(("127.0.0.1", port), timeout=10)
                break
            except OSError:
                if time.monotonic() > deadline:
                    raise
                time.sleep(0.1)
        with sock:
            sock.sendall(frame({"jsonrpc": "2.0", "id": 1, "method": "initialize",
                                "params": {"processId": None, "rootUri": tmp_path.as_uri(), "capabilities": {}}}))
            reply = read_message(sock)
            while "id" not in reply:  # skip notifications (log messages)
                reply = read_message(sock)
        assert reply["id"] == 1
        commands = reply["result"]["capabilities"]["executeCommandProvider"]["commands"]
        assert {"k1412.runTask", "k1412.delegate", "k1412.cancelRun", "k1412.listModels"} <= set(commands)
    finally:
        proc.kill()
        proc.wait(10)
    assert proc.stdout is not None and proc.stdout.read() == b""  # nothing but protocol, and on the socket


@pytest.mark.parametrize("address", ["0.0.0.0:2087", "192.168.1.5:2087", "example.com:2087", "nonsense"])
def test_tcp_refuses_anything_but_loopback(address: str) -> None:
    proc = subprocess.run([sys.executable, "-m", "k1412_ls.cli", "lsp", "--tcp", address], capture_output=True,
                          text=True, timeout=30, stdin=subprocess.DEVNULL)
    assert proc.returncode == 2
    assert len(proc.stderr.strip().splitlines()) == 1 and proc.stderr.startswith("k1412:")
