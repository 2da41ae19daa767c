"""`k1412 acp` start → its `initialize` reply, beside `k1412 lsp` start → its `initialize` reply (issue 27).

Both servers are started the way an editor starts them (`python -m k1412_ls.cli acp|lsp`, stdio), sent
their protocol's `initialize` the moment the process exists, and timed to the first byte of the reply.
The two are measured alternately, N times each, on the same machine at the same time, and the medians are
printed side by side with their ratio (acp / lsp; below 1 means `k1412 acp` answers sooner).

    python scripts/bench_acp_start.py [--repeat 7]
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]

ACP_INIT = json.dumps({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
    "protocolVersion": 1, "clientCapabilities": {"fs": {"readTextFile": True, "writeTextFile": True}}}}) + "\n"
_LSP_BODY = json.dumps({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
    "processId": os.getpid(), "rootUri": None, "capabilities": {}}})
LSP_INIT = f"Content-Length: {len(_LSP_BODY.encode())}\r\n\r\n{_LSP_BODY}"


def time_to_session(home: Path) -> float:
    """Seconds from starting ``k1412 acp`` to its session/new reply (the SDK loaded, the agent serving)."""
    env = dict(os.environ, K1412_HOME=str(home / "state"), XDG_CONFIG_HOME=str(home / "config"),
               PYTHONPATH=str(REPO))
    new = json.dumps({"jsonrpc": "2.0", "id": 2, "method": "session/new", "params": {"cwd": str(home),
                                                                                      "mcpServers": []}}) + "\n"
    began = time.perf_counter()
    process = subprocess.Popen([sys.executable, "-m", "k1412_ls.cli", "acp"], stdin=subprocess.PIPE,
                               stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, env=env, cwd=str(REPO))
    assert process.stdin is not None and process.stdout is not None
    process.stdin.write((ACP_INIT + new).encode())
    process.stdin.flush()
    while (line := process.stdout.readline()) and json.loads(line).get("id") != 2:
        pass
    elapsed = time.perf_counter() - began
    process.stdin.close()
    process.wait(timeout=20)
    return elapsed


def time_to_reply(mode: str, home: Path) -> float:
    """Seconds from starting ``k1412 MODE`` to the first byte of its initialize reply."""
    env = dict(os.environ, K1412_HOME=str(home / "state"), XDG_CONFIG_HOME=str(home / "config"),
               PYTHONPATH=str(REPO))
    env.pop("K1412_CONFIG", None)
    began = time.perf_counter()
    process = subprocess.Popen([sys.executable, "-m", "k1412_ls.cli", mode], stdin=subprocess.PIPE,
                               stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, env=env, cwd=str(REPO))
    assert process.stdin is not None and process.stdout is not None
    process.stdin.write((ACP_INIT if mode == "acp" else LSP_INIT).encode())
    process.stdin.flush()
    first = process.stdout.read(1)
    elapsed = time.perf_counter() - began
    if not first:
        raise SystemExit(f"k1412 {mode} closed its output without answering initialize")
    process.stdin.close()
    try:
        process.wait(timeout=20)
    except subprocess.TimeoutExpired:
        process.kill()
        process.wait()
    return elapsed


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=7, help="starts of each server (default 7)")
    args = parser.parse_args()
    times: dict[str, list[float]] = {"acp": [], "lsp": []}
    with tempfile.TemporaryDirectory() as tmp:
        for mode in ("acp", "lsp"):  # one warm-up start each: the page cache, the bytecode
            time_to_reply(mode, Path(tmp))
        for _ in range(args.repeat):
            for mode in ("acp", "lsp"):
                times[mode].append(time_to_reply(mode, Path(tmp)))
        ready = statistics.median(time_to_session(Path(tmp)) for _ in range(3))
    acp, lsp = statistics.median(times["acp"]), statistics.median(times["lsp"])
    print(f"start → initialize reply, median of {args.repeat} starts each (alternating):")
    print(f"  k1412 acp  {acp * 1000:7.0f} ms   (min {min(times['acp']) * 1000:.0f}, max {max(times['acp']) * 1000:.0f})")
    print(f"  k1412 lsp  {lsp * 1000:7.0f} ms   (min {min(times['lsp']) * 1000:.0f}, max {max(times['lsp']) * 1000:.0f})")
    print(f"  ratio acp / lsp: {acp / lsp:.2f}")
    print(f"k1412 acp start → session/new reply (the protocol SDK loaded): {ready * 1000:.0f} ms, median of 3")
    return 0


if __name__ == "__main__":
    sys.exit(main())
