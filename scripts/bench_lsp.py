"""Benchmark the K1412 language server against jedi-language-server, side by side in one run.

Figures (median of N rounds, servers alternated so machine load hits both):

* start-up: process start -> ``initialize`` reply, as a ratio k1412/jedi, for ``k1412 lsp``
  (through the CLI module) and ``python -m k1412_ls.lsp`` (the server module alone);
* idle RSS: resident memory one second after ``initialized``, as a ratio k1412/jedi;
* run latency (k1412 only): ``workspace/executeCommand k1412.runTask`` -> first
  ``$/progress``, for the first run (it builds the runtime) and a later one.

Usage: python scripts/bench_lsp.py [--rounds 5]
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from tests.support.scripted_server import ScriptedServer  # noqa: E402

SERVERS = {
    "k1412": [sys.executable, "-m", "k1412_ls.cli", "lsp"],  # `k1412 lsp`, through the CLI module
    "k1412-m": [sys.executable, "-m", "k1412_ls.lsp"],  # the server module alone
    "jedi": [sys.executable, "-c", "from jedi_language_server.cli import cli; cli()"],
}


class RawClient:
    """A minimal JSON-RPC client over a subprocess's stdio."""

    def __init__(self, process: asyncio.subprocess.Process) -> None:
        self.process = process
        self.next_id = 0

    def send(self, method: str, params: Any, *, request: bool = True) -> int | None:
        message: dict[str, Any] = {"jsonrpc": "2.0", "method": method, "params": params}
        msg_id = None
        if request:
            self.next_id += 1
            msg_id = message["id"] = self.next_id
        body = json.dumps(message).encode()
        assert self.process.stdin is not None
        self.process.stdin.write(b"Content-Length: %d\r\n\r\n%s" % (len(body), body))
        return msg_id

    async def receive(self) -> dict[str, Any]:
        assert self.process.stdout is not None
        length = 0
        while True:
            line = await self.process.stdout.readline()
            if not line:
                raise EOFError("server closed stdout")
            if line.lower().startswith(b"content-length:"):
                length = int(line.split(b":")[1])
            elif line in (b"\r\n", b"\n") and length:
                return json.loads(await self.process.stdout.readexactly(length))

    async def until(self, predicate: Any, timeout: float = 60) -> dict[str, Any]:
        async def loop() -> dict[str, Any]:
            while True:
                message = await self.receive()
                if "method" in message and "id" in message:  # a server request: answer it
                    self.answer(message)
                if predicate(message):
                    return message
        return await asyncio.wait_for(loop(), timeout)

    def answer(self, message: dict[str, Any]) -> None:
        result: Any = None
        if message["method"] == "workspace/configuration":
            result = [None for _ in message["params"]["items"]]
        elif message["method"] == "workspace/applyEdit":
            result = {"applied": True}
        body = json.dumps({"jsonrpc": "2.0", "id": message["id"], "result": result}).encode()
        assert self.process.stdin is not None
        self.process.stdin.write(b"Content-Length: %d\r\n\r\n%s" % (len(body), body))

    async def close(self) -> None:
        try:
            shutdown = self.send("shutdown", None)
            await self.until(lambda m: m.get("id") == shutdown, timeout=10)
            self.send("exit", None, request=False)
            await asyncio.wait_for(self.process.wait(), 10)
        except (TimeoutError, EOFError, BrokenPipeError, ConnectionResetError):
            self.process.kill()
            await self.process.wait()


def rss_kb(pid: int) -> int:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1])
    return 0


def initialize_params(root: Path) -> dict[str, Any]:
    return {"processId": os.getpid(), "rootUri": root.as_uri(),
            "capabilities": {"window": {"workDoneProgress": True},
                             "workspace": {"applyEdit": True, "workspaceEdit": {"documentChanges": True}}}}


async def start(command: list[str], env: dict[str, str], root: Path) -> tuple[RawClient, float]:
    began = time.perf_counter()
    process = await asyncio.create_subprocess_exec(*command, stdin=asyncio.subprocess.PIPE,
                                                   stdout=asyncio.subprocess.PIPE,
                                                   stderr=asyncio.subprocess.DEVNULL, env=env, cwd=REPO)
    client = RawClient(process)
    init = client.send("initialize", initialize_params(root))
    await client.until(lambda m: m.get("id") == init)
    elapsed = time.perf_counter() - began
    client.send("initialized", {}, request=False)
    return client, elapsed


async def startup_round(name: str, env: dict[str, str], root: Path) -> tuple[float, int]:
    client, elapsed = await start(SERVERS[name], env, root)
    await asyncio.sleep(1.0)
    rss = rss_kb(client.process.pid)
    await client.close()
    return elapsed, rss


async def run_latency(env: dict[str, str], root: Path) -> list[float]:
    client, _ = await start(SERVERS["k1412"], env, root)
    latencies = []
    for index in range(2):
        token = f"bench-{index}"
        began = time.perf_counter()
        request = client.send("workspace/executeCommand", {
            "command": "k1412.runTask", "arguments": [{"task": "Say hello."}], "workDoneToken": token})
        await client.until(lambda m, t=token: m.get("method") == "$/progress" and m["params"]["token"] == t)
        latencies.append(time.perf_counter() - began)
        await client.until(lambda m, r=request: m.get("id") == r)
    await client.close()
    return latencies


async def main(rounds: int) -> None:
    with tempfile.TemporaryDirectory() as tmp, ScriptedServer([{"repeat": True, "content": "Hello."}]) as model:
        root = Path(tmp) / "ws"
        root.mkdir()
        config = Path(tmp) / "k1412.toml"
        config.write_text(f'default_model = "bench"\n[providers.bench]\nbase_url = "{model.base_url}"\n'
                          f'[models.bench]\nprovider = "bench"\nprovider_model = "scripted"\n', encoding="utf-8")
        env = {**os.environ, "K1412_CONFIG": str(config), "K1412_HOME": str(Path(tmp) / "home")}
        figures: dict[str, dict[str, list[float]]] = {name: {"startup": [], "rss": []} for name in SERVERS}
        for _ in range(rounds):
            for name in SERVERS:
                elapsed, rss = await startup_round(name, env, root)
                figures[name]["startup"].append(elapsed)
                figures[name]["rss"].append(rss)
        latency = await run_latency(env, root)
    med = {name: {key: statistics.median(values) for key, values in f.items()} for name, f in figures.items()}
    print(f"rounds: {rounds} (median), python {sys.version.split()[0]}")
    print(f"{'server':<8} {'start -> initialize reply':>26} {'idle RSS':>12}")
    for name in SERVERS:
        print(f"{name:<8} {med[name]['startup'] * 1000:>23.0f} ms {med[name]['rss'] / 1024:>9.1f} MiB")
    for name in ("k1412", "k1412-m"):
        print(f"ratio {name}/jedi: start-up {med[name]['startup'] / med['jedi']['startup']:.2f}, "
              f"idle RSS {med[name]['rss'] / med['jedi']['rss']:.2f} (target <= 1.00 each)")
    print(f"executeCommand -> first progress: first run {latency[0] * 1000:.0f} ms (builds the runtime), "
          f"second run {latency[1] * 1000:.0f} ms")


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--rounds", type=int, default=5)
    asyncio.run(main(parser.parse_args().rounds))
