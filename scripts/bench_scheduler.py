"""Scheduler safe-parallel-v1: 8 parallel-safe calls of 200 ms each in one response (issue 4 benchmark).

Measured side by side in one run: the batch through the real Scheduler (thread pool, events, guards)
against the same 8 calls one after another. Target: wall <= 1.25 x 200 ms.

    python scripts/bench_scheduler.py [--repeat 5]
"""

from __future__ import annotations

import argparse
import asyncio
import statistics
import sys
import tempfile
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

from pydantic import BaseModel, ConfigDict

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from k1412_ls.core.events import Emitter, EventBus, JsonlSink
from k1412_ls.core.guards import GuardState, find_duplicate_commands, normalize_arguments
from k1412_ls.core.model_port import ToolCall
from k1412_ls.core.scheduler import Scheduler
from k1412_ls.text.redact import Redactor
from k1412_ls.tools.files.documents import DiskDocumentStore
from k1412_ls.tools.files.workspace import Workspace
from k1412_ls.tools.registry import Tool, ToolContext, ToolRegistry, ToolResult

CALL_S = 0.2


class NoArgs(BaseModel):
    model_config = ConfigDict(extra="forbid")


def _slow(_args: NoArgs, _ctx: ToolContext) -> ToolResult:
    time.sleep(CALL_S)
    return ToolResult.success()


def make_tool(parallel: bool) -> Tool:
    return Tool("slow_read", "Sleeps 200 ms.", NoArgs, _slow, parallel_safe=parallel, read_only=True)


async def batch_wall(parallel: bool, workdir: Path) -> float:
    bus = EventBus("bench", "bench", None, Redactor(), [JsonlSink(workdir / "events.jsonl")])
    ctx = ToolContext(workspace=Workspace(workdir), documents=DiskDocumentStore(workdir))
    calls = [ToolCall(f"c{i}", "slow_read", {}, "{}") for i in range(8)]
    with ThreadPoolExecutor(32) as executor:
        scheduler = Scheduler(ToolRegistry([make_tool(parallel)]), executor, Emitter(bus), guards=GuardState(),
                              normalize=normalize_arguments, find_duplicates=find_duplicate_commands)
        started = time.perf_counter()
        outcomes = await scheduler.run_batch(calls, ctx)
        wall = time.perf_counter() - started
    assert [o.call.id for o in outcomes] == [c.id for c in calls] and all(o.result.ok for o in outcomes)
    return wall


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--repeat", type=int, default=5)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        parallel = [asyncio.run(batch_wall(True, Path(tmp))) for _ in range(args.repeat)]
        serial = [asyncio.run(batch_wall(False, Path(tmp))) for _ in range(2)]
    p, s = statistics.median(parallel), statistics.median(serial)
    ratio = p / CALL_S
    print("8 calls x 200 ms in one response (median wall):")
    print(f"  safe-parallel-v1 (parallel_safe): {p * 1000:7.1f} ms  = {ratio:.3f} x one call "
          f"(target <= 1.25: {'met' if ratio <= 1.25 else 'NOT met'})")
    print(f"  same calls, not parallel-safe:    {s * 1000:7.1f} ms  = {s / CALL_S:.3f} x one call")
    print(f"  speedup: {s / p:.2f}x")


if __name__ == "__main__":
    main()
