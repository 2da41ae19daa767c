"""Soak one long-lived ``k1412 lsp`` process with N sequential runs and print what it keeps.

Each run is 4 model steps against a local scripted model (write_file, read_file, list_files,
final answer) through ``workspace/executeCommand k1412.runTask``, with a work-done token and
``workspace/applyEdit`` answered like an editor does. Printed side by side:

* RSS slope after warm-up (least squares over runs after ``--warmup``), in KiB per run;
* the server's bookkeeping tables (its own log line at each run start: pygls' request futures,
  result types, progress tokens, runs in flight) at the first and the last run;
* open file descriptors and threads after warm-up and at the end;
* wall time of the first run against the median of later runs, as an editor user gets it: the
  server sits idle for :data:`IDLE_BEFORE_PROMPT_S`, the task prompt opens (the editor clients send
  ``k1412.prepare``), the user types for :data:`TYPING_S` (a short task typed fast, or pasted), then
  ``k1412.runTask``. Reported too: a first run with no prepare (a client that never sends it) in a
  second server, task sent after the same idle time;
* idle RSS and start -> ``initialize`` reply for k1412 and jedi-language-server (median of 3), idle
  meaning 3 s after ``initialized`` with no prompt opened; and k1412's RSS once prepared (the prompt
  is open, the machinery loaded);
* building one model request at history lengths 10, 100 and 400 messages: the SDK's own path
  (``maybe_transform`` + JSON, what ``chat.completions.create`` does) against K1412's
  :class:`BodyEncoder` along a growing run.

The first ~100 runs fill bounded caches (RSS steps up ~2-3 MiB between runs 50 and 100, then stays
flat, also with MALLOC_ARENA_MAX=1), hence the default warm-up of 100 runs; the RSS by run is printed.

Usage: python scripts/bench_soak.py [--runs 500] [--warmup 100] [--typing 3.0]
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import re
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))
sys.path.insert(0, str(REPO / "scripts"))

from bench_lsp import SERVERS, RawClient, initialize_params, rss_kb  # noqa: E402

from tests.support.scripted_server import ScriptedServer  # noqa: E402

TABLES = re.compile(r"run (run-\w+) starting; in flight: (.*)$")
IDLE_BEFORE_PROMPT_S = 1.0  # the editor is up; the user opens the task prompt a moment later
TYPING_S = 3.0  # default pause from the prompt opening to Enter: a short task typed fast (10 words at 60 wpm: 10 s)


def task(index: int) -> str:
    return f"Create hello{index % 7}.py that prints hello {index}."


def run_script(index: int) -> list[dict[str, Any]]:
    name = f"hello{index % 7}.py"
    return [
        {"tool_calls": [{"name": "write_file", "arguments": {"path": name, "content": f"print('hello {index}')\n"}}]},
        {"tool_calls": [{"name": "read_file", "arguments": {"path": name}}]},
        {"tool_calls": [{"name": "list_files", "arguments": {"path": "."}}]},
        {"content": f"Created {name}; it prints hello {index}, read back above."},
    ]


def proc_counts(pid: int) -> tuple[int, int]:
    fds = len(os.listdir(f"/proc/{pid}/fd"))
    threads = next(int(line.split()[1]) for line in Path(f"/proc/{pid}/status").read_text().splitlines()
                   if line.startswith("Threads:"))
    return fds, threads


def slope(values: list[float]) -> float:
    xs = list(range(len(values)))
    mx, my = statistics.fmean(xs), statistics.fmean(values)
    den = sum((x - mx) ** 2 for x in xs)
    return sum((x - mx) * (y - my) for x, y in zip(xs, values, strict=True)) / den if den else 0.0


async def start(command: list[str], env: dict[str, str], root: Path, log: Path | None) -> tuple[RawClient, float]:
    began = time.perf_counter()
    stderr: Any = open(log, "wb") if log is not None else asyncio.subprocess.DEVNULL
    process = await asyncio.create_subprocess_exec(*command, stdin=asyncio.subprocess.PIPE,
                                                   stdout=asyncio.subprocess.PIPE, stderr=stderr,
                                                   env=env, cwd=REPO, limit=1 << 24)
    client = RawClient(process)
    init = client.send("initialize", initialize_params(root))
    await client.until(lambda m: m.get("id") == init)
    elapsed = time.perf_counter() - began
    client.send("initialized", {}, request=False)
    return client, elapsed


async def open_prompt(client: RawClient) -> dict[str, Any]:
    """What the editor clients send when the task prompt opens; the reply comes at once."""
    request = client.send("workspace/executeCommand", {"command": "k1412.prepare", "arguments": [{}]})
    reply = await client.until(lambda m: m.get("id") == request, timeout=30)
    return reply.get("result") or reply


async def soak(env: dict[str, str], root: Path, runs: int, warmup: int, log: Path, typing_s: float) -> dict[str, Any]:
    client, _ = await start(SERVERS["k1412"], env, root, log)
    await asyncio.sleep(IDLE_BEFORE_PROMPT_S)  # the editor is up, nothing loaded yet
    prepared = await open_prompt(client)
    await asyncio.sleep(typing_s)  # the user types the task; the machinery loads meanwhile
    ready_at_enter = "run machinery ready" in log.read_text(errors="replace")
    walls, rss, statuses = [], [], []
    fds_threads: list[tuple[int, int]] = []
    for index in range(runs):
        began = time.perf_counter()
        request = client.send("workspace/executeCommand", {
            "command": "k1412.runTask", "arguments": [{"task": task(index)}], "workDoneToken": f"soak-{index}"})
        reply = await client.until(lambda m, r=request: m.get("id") == r, timeout=120)
        walls.append(time.perf_counter() - began)
        statuses.append((reply.get("result") or {}).get("status", reply.get("error", {}).get("message")))
        rss.append(rss_kb(client.process.pid))
        if index in (warmup - 1, runs - 1):
            fds_threads.append(proc_counts(client.process.pid))
    await client.close()
    text = log.read_text(errors="replace")
    tables = [m.group(2) for line in text.splitlines() if (m := TABLES.search(line))]
    warm = re.search(r"run machinery ready in (\d+) ms", text)
    return {"walls": walls, "rss": rss, "statuses": statuses, "fds_threads": fds_threads, "tables": tables,
            "warm_ms": int(warm.group(1)) if warm else None, "prepared": prepared, "ready_at_enter": ready_at_enter}


async def without_prepare(env: dict[str, str], root: Path, runs: int = 3) -> list[float]:
    """Walls of the first ``runs`` runs in a fresh server whose client never sends k1412.prepare."""
    client, _ = await start(SERVERS["k1412"], env, root, None)
    await asyncio.sleep(IDLE_BEFORE_PROMPT_S)
    walls = []
    for index in range(runs):
        began = time.perf_counter()
        request = client.send("workspace/executeCommand", {
            "command": "k1412.runTask", "arguments": [{"task": task(index)}], "workDoneToken": f"cold-{index}"})
        reply = await client.until(lambda m, r=request: m.get("id") == r, timeout=120)
        walls.append(time.perf_counter() - began)
        if (reply.get("result") or {}).get("status") != "completed":
            raise SystemExit(f"a run without prepare did not complete: {reply}")
    await client.close()
    return walls


async def idle_round(name: str, env: dict[str, str], root: Path) -> tuple[float, int, int]:
    """Start -> initialize reply, idle RSS 3 s after initialized, and (k1412) RSS once prepared."""
    client, elapsed = await start(SERVERS[name], env, root, None)
    await asyncio.sleep(3.0)  # an editor open, no task prompt yet
    rss = rss_kb(client.process.pid)
    prepared_rss = 0
    if name == "k1412":
        began = time.perf_counter()
        while (await open_prompt(client)).get("ready") is not True and time.perf_counter() - began < 60:
            await asyncio.sleep(0.5)  # the prompt is open; wait until the warm-up has finished
        await asyncio.sleep(0.5)
        prepared_rss = rss_kb(client.process.pid)
    await client.close()
    return elapsed, rss, prepared_rss


def request_building(lengths: tuple[int, ...] = (10, 100, 400)) -> dict[int, tuple[float, float]]:
    """Median ms to build one request body at each history length: (SDK path, BodyEncoder)."""
    from openai._utils import maybe_transform
    from openai._utils._json import openapi_dumps
    from openai.types.chat.completion_create_params import CompletionCreateParamsStreaming

    from k1412_ls.models.request_body import BodyEncoder

    tools = [{"type": "function", "function": {"name": f"tool_{i}", "description": "d" * 200, "parameters": {
        "type": "object", "properties": {"path": {"type": "string"}}}}} for i in range(20)]
    messages: list[dict[str, Any]] = [{"role": "system", "content": "rules " * 500}, {"role": "user", "content": "task"}]
    encoder = BodyEncoder()
    figures: dict[int, tuple[float, float]] = {}
    step = 0
    while len(messages) < max(lengths):
        call = {"id": f"call_{step}", "type": "function",
                "function": {"name": "read_file", "arguments": json.dumps({"path": f"src/m{step}.py"})}}
        messages.append({"role": "assistant", "content": "Reading.", "tool_calls": [call]})
        messages.append({"role": "tool", "tool_call_id": f"call_{step}", "content": "x = 1  # ✓\n" * 150})
        step += 1
        params = {"model": "m", "messages": messages, "tools": tools, "tool_choice": "auto", "max_tokens": 4096,
                  "stream": True, "stream_options": {"include_usage": True}}
        encoder.encode(params)  # the run's earlier requests
        if len(messages) in lengths:
            sdk, ours = [], []
            for _ in range(5):
                began = time.perf_counter()
                openapi_dumps(maybe_transform(params, CompletionCreateParamsStreaming))
                sdk.append(time.perf_counter() - began)
                began = time.perf_counter()
                encoder.encode(params)
                ours.append(time.perf_counter() - began)
            figures[len(messages)] = (statistics.median(sdk) * 1000, statistics.median(ours) * 1000)
    return figures


async def main(runs: int, warmup: int, typing_s: float) -> None:
    cold_runs = 3
    script = [step for index in range(runs) for step in run_script(index)]
    script += [step for index in range(cold_runs) for step in run_script(index)]
    with tempfile.TemporaryDirectory() as tmp, ScriptedServer(script) as model:
        root = Path(tmp) / "ws"
        root.mkdir()
        config = Path(tmp) / "k1412.toml"
        config.write_text(f'default_model = "bench"\n[providers.bench]\nbase_url = "{model.base_url}"\n'
                          f'[models.bench]\nprovider = "bench"\nprovider_model = "scripted"\n', encoding="utf-8")
        env = {**os.environ, "K1412_CONFIG": str(config), "K1412_HOME": str(Path(tmp) / "home")}
        result = await soak(env, root, runs, warmup, Path(tmp) / "server.log", typing_s)
        cold = await without_prepare(env, root, cold_runs)
        idle: dict[str, list[tuple[float, int, int]]] = {"k1412": [], "jedi": []}
        for _ in range(3):
            for name in idle:
                idle[name].append(await idle_round(name, env, root))
    walls, rss = result["walls"], result["rss"]
    later = statistics.median(walls[1:]) if runs > 1 else walls[0]
    kib_per_run = slope([float(v) for v in rss[warmup:]])
    half = warmup + (runs - warmup) // 2
    late_kib_per_run = slope([float(v) for v in rss[half:]])
    statuses = {s: result["statuses"].count(s) for s in set(result["statuses"])}
    (fd0, th0), (fd1, th1) = result["fds_threads"][0], result["fds_threads"][-1]
    tables = result["tables"]
    print(f"runs: {runs} sequential 4-step runs through one `k1412 lsp` process, warm-up {warmup}; "
          f"python {sys.version.split()[0]}")
    print(f"statuses: {statuses}")
    if set(statuses) != {"completed"}:
        raise SystemExit("not every run completed (see the statuses above): the figures would not be comparable")
    print(f"RSS: {rss[warmup - 1] / 1024:.1f} MiB after warm-up -> {rss[-1] / 1024:.1f} MiB after run {runs}; "
          f"slope {kib_per_run:.2f} KiB/run (target <= 1.00), over runs {half + 1}-{runs} {late_kib_per_run:.2f} KiB/run")
    marks = sorted({warmup, *range(100, runs + 1, 100), runs})
    print("RSS by run: " + ", ".join(f"{m}: {rss[m - 1] / 1024:.1f}" for m in marks) + " MiB")
    print(f"tables at run 1: {tables[0] if tables else '?'}")
    print(f"tables at run {len(tables)}: {tables[-1] if tables else '?'}")
    print(f"fds: {fd0} after warm-up -> {fd1} at the end; threads: {th0} -> {th1}")
    warm = "unfinished" if result["warm_ms"] is None else f"{result['warm_ms']} ms"
    print(f"prompt: idle {IDLE_BEFORE_PROMPT_S:.1f} s after initialized, k1412.prepare -> {result['prepared']}, "
          f"typing {typing_s:.1f} s; warm-up {warm}, done before Enter: {result['ready_at_enter']}")
    print(f"wall: first run {walls[0] * 1000:.0f} ms, later runs median {later * 1000:.0f} ms; "
          f"ratio {walls[0] / later:.2f} (target <= 2.00)")
    cold_later = statistics.median(cold[1:])
    print(f"without k1412.prepare (task sent {IDLE_BEFORE_PROMPT_S:.1f} s after initialized, fresh server): first run "
          f"{cold[0] * 1000:.0f} ms, runs 2-{cold_runs} median {cold_later * 1000:.0f} ms; ratio {cold[0] / cold_later:.2f}")
    med = {name: (statistics.median(e for e, _, _ in v), statistics.median(r for _, r, _ in v))
           for name, v in idle.items()}
    for name, (elapsed, idle_rss) in med.items():
        print(f"{name:<6} start -> initialize reply {elapsed * 1000:.0f} ms, idle RSS {idle_rss / 1024:.1f} MiB")
    print(f"ratio k1412/jedi: start {med['k1412'][0] / med['jedi'][0]:.2f}, "
          f"idle RSS {med['k1412'][1] / med['jedi'][1]:.2f} (target <= 0.85 each)")
    prepared_rss = statistics.median(p for _, _, p in idle["k1412"])
    print(f"k1412 RSS with the task prompt open (k1412.prepare done): {prepared_rss / 1024:.1f} MiB "
          f"({prepared_rss / med['jedi'][1]:.2f} of jedi's idle RSS)")
    building = request_building()
    for length, (sdk, ours) in building.items():
        print(f"request body at {length:>3} messages: SDK transform + JSON {sdk:7.2f} ms, "
              f"K1412 BodyEncoder {ours:6.3f} ms")
    first, last = building[min(building)], building[max(building)]
    print(f"growth {min(building)} -> {max(building)} messages: SDK {last[0] / first[0]:.1f}x, "
          f"K1412 {last[1] / first[1]:.1f}x")


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--runs", type=int, default=500)
    parser.add_argument("--warmup", type=int, default=100)
    parser.add_argument("--typing", type=float, default=TYPING_S,
                        help="seconds from the prompt opening (k1412.prepare) to the first task")
    args = parser.parse_args()
    asyncio.run(main(args.runs, min(args.warmup, args.runs), args.typing))
