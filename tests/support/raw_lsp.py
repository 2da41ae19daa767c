"""A raw byte-level client of the real ``k1412 lsp`` process, for malformed-frame tests.

The typed pytest-lsp client cannot send broken frames; this one writes bytes as given and
collects every framed reply the server sends, so a test can check that each request id got
exactly one answer.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import threading
import time
from collections import Counter
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

SERVER = [sys.executable, "-m", "k1412_ls.cli", "lsp"]


def frame(message: Any) -> bytes:
    body = message if isinstance(message, bytes) else json.dumps(message).encode()
    return b"Content-Length: %d\r\n\r\n%s" % (len(body), body)


def request(msg_id: str | int, method: str = "workspace/executeCommand", params: Any = None) -> dict[str, Any]:
    if params is None and method == "workspace/executeCommand":
        params = {"command": "k1412.listModels", "arguments": []}
    message: dict[str, Any] = {"jsonrpc": "2.0", "id": msg_id, "method": method}
    if params is not None:
        message["params"] = params
    return message


class RawServer:
    """The server process, its framed replies (parsed on a thread) and its stderr log."""

    def __init__(self, root: Path, env: dict[str, str] | None = None,
                 init_options: dict[str, Any] | None = None) -> None:
        self.proc = subprocess.Popen(SERVER, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                     stderr=subprocess.PIPE, env={**os.environ, **(env or {})})
        self.replies: list[dict[str, Any]] = []
        self.stderr: list[str] = []
        self._lock = threading.Condition()
        threading.Thread(target=self._read, daemon=True).start()
        threading.Thread(target=self._read_log, daemon=True).start()
        params: dict[str, Any] = {"processId": None, "rootUri": root.as_uri(), "capabilities": {}}
        if init_options is not None:
            params["initializationOptions"] = init_options
        self.send(frame(request(0, "initialize", params)))
        self.wait_for(0)
        self.send(frame({"jsonrpc": "2.0", "method": "initialized", "params": {}}))

    def _read(self) -> None:
        stream = self.proc.stdout
        assert stream is not None
        while True:
            header = b""
            while not header.endswith(b"\r\n\r\n"):
                byte = stream.read(1)
                if not byte:
                    return
                header += byte
            length = next(int(line.split(b":")[1]) for line in header.split(b"\r\n")
                          if line.lower().startswith(b"content-length"))
            body = stream.read(length)
            message = json.loads(body)
            with self._lock:
                self.replies.append(message)
                self._lock.notify_all()

    def _read_log(self) -> None:
        stream = self.proc.stderr
        assert stream is not None
        for raw in stream:
            with self._lock:
                self.stderr.append(raw.decode("utf-8", "replace"))

    def send(self, data: bytes, *, pieces: int = 1) -> None:
        stdin = self.proc.stdin
        assert stdin is not None
        step = max(1, len(data) // pieces)
        for start in range(0, len(data), step):
            stdin.write(data[start:start + step])
            stdin.flush()
            if pieces > 1:
                time.sleep(0.001)

    def answers(self, msg_id: Any) -> list[dict[str, Any]]:
        with self._lock:
            return [r for r in self.replies if "method" not in r and r.get("id") == msg_id]

    def wait_for(self, *ids: Any, timeout: float = 20) -> None:
        deadline = time.monotonic() + timeout
        with self._lock:
            while not all(self.answers(i) for i in ids):
                left = deadline - time.monotonic()
                if left <= 0 or self.proc.poll() is not None:
                    missing = [i for i in ids if not self.answers(i)]
                    raise AssertionError(f"no reply to {missing}; stderr: {''.join(self.stderr)[-2000:]}")
                self._lock.wait(min(left, 0.1))

    def counts(self) -> Counter[Any]:
        with self._lock:
            return Counter(json.dumps(r.get("id")) for r in self.replies if "method" not in r)

    def log(self) -> str:
        with self._lock:
            return "".join(self.stderr)

    def close(self) -> None:
        if self.proc.poll() is None:
            try:
                self.send(frame(request("bye", "shutdown")))
                self.send(frame({"jsonrpc": "2.0", "method": "exit"}))
                self.proc.wait(5)
            except (OSError, subprocess.TimeoutExpired):
                self.proc.kill()
                self.proc.wait(5)


@contextmanager
def unreachable_model_server(home: Path) -> Iterator[RawServer]:
    """A server in ``home/ws`` whose configured model is unreachable: for tests that never reach a model."""
    from tests.conftest import write_config

    (home / "ws").mkdir()
    config = write_config(home / "k1412.toml", "http://127.0.0.1:9/v1")
    server = RawServer(home / "ws", env={"K1412_CONFIG": str(config), "K1412_HOME": str(home / "state")})
    try:
        yield server
    finally:
        server.close()
