"""Loop overhead per iteration, model and tools excluded (issue 2 benchmark).

An in-process model answers instantly with one call to a no-op tool; the loop
runs its real scheduler, guards, evidence gate, event bus (with a JSONL sink)
and redaction. Histories of 10, 100 and 1000 messages are measured side by
side in one run. Target: <= 2 ms per iteration at 1000 messages.

    python scripts/bench_loop.py [--iterations 200]
"""

from __future__ import annotations

import argparse
import asyncio
import sys
import tempfile
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from k1412_ls.config import build_config
from k1412_ls.core.agent import AgentLoop
from k1412_ls.core.context_policy import ContextPolicy
from k1412_ls.core.events import Emitter, EventBus, JsonlSink
from k1412_ls.core.evidence_binding import BoundGate
from k1412_ls.core.guards import GuardState, find_duplicate_commands, normalize_arguments
from k1412_ls.core.model_port import ModelReply, ToolCall
from k1412_ls.core.run_outcomes import RunEnded
from k1412_ls.core.scheduler import Scheduler
from k1412_ls.text.redact import Redactor
from k1412_ls.tools.files.documents import DiskDocumentStore
from k1412_ls.tools.files.workspace import Workspace
from k1412_ls.tools.registry import Tool, ToolContext, ToolRegistry, ToolResult


class NoArgs(BaseModel):
    model_config = ConfigDict(extra="forbid")


NOOP = Tool("noop", "Does nothing.", NoArgs, lambda _a, _c: ToolResult.success(), parallel_safe=True,
            read_only=True)


class InstantModel:
    """Answers at once: a no-op tool call until the budget is spent, then a final answer."""

    carries_reasoning = False

    def __init__(self, calls: int) -> None:
        self.left = calls

    async def complete(self, messages: list[dict[str, Any]], tools: list[dict[str, Any]], spec: Any) -> ModelReply:
        if self.left <= 0:
            return ModelReply(content="done")
        self.left -= 1
        return ModelReply(content="", tool_calls=[ToolCall(f"c{self.left}", "noop", {}, "{}")],
                          finish_reason="tool_calls")


async def measure(history_len: int, iterations: int, workdir: Path) -> float:
    spec = build_config({}).model_spec("luna").model_copy(update={"max_iterations": iterations + 5,
                                                                  "context_chars": 10**9})
    history = [{"role": "user" if i % 2 == 0 else "assistant", "content": f"message {i} " + "x" * 200}
               for i in range(history_len)]
    messages = ContextPolicy().prepare(history, "What does the code do?", spec.context_chars).messages
    bus = EventBus("bench", "bench", None, Redactor.from_environment(), [JsonlSink(workdir / f"{history_len}.jsonl")])
    emit = Emitter(bus)
    registry = ToolRegistry([NOOP])
    ctx = ToolContext(workspace=Workspace(workdir), documents=DiskDocumentStore(), redactor=bus.redactor)
    with ThreadPoolExecutor(8) as executor:
        scheduler = Scheduler(registry, executor, emit, guards=GuardState(), normalize=normalize_arguments,
                              find_duplicates=find_duplicate_commands)
        gate = BoundGate.for_task("What does the code do?", bus)
        loop = AgentLoop(InstantModel(iterations), spec, registry, scheduler, ctx, emit, gate, iterations + 5)
        started = time.perf_counter()
        try:
            await loop.run(messages)
        except RunEnded:
            pass
        elapsed = time.perf_counter() - started
    return elapsed / loop.iterations * 1000


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--iterations", type=int, default=200)
    parser.add_argument("--no-commands", action="store_true",
                        help="skip the per-command cost of status observation and change tracking")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        results = {n: asyncio.run(measure(n, args.iterations, Path(tmp))) for n in (10, 100, 1000)}
    print(f"loop overhead per iteration ({args.iterations} iterations, instant model, no-op tool):")
    for n, ms in results.items():
        print(f"  {n:>5} messages of history: {ms:6.3f} ms/iteration")
    print(f"  ratio 1000 vs 10 messages: {results[1000] / results[10]:.2f}x; target <= 2 ms at 1000: "
          f"{'met' if results[1000] <= 2.0 else 'NOT met'}")
    if not args.no_commands:
        # The evidence machinery each run_command adds (scripts/bench_observation.py, 5,000 files).
        sys.path.insert(0, str(Path(__file__).resolve().parent))
        from bench_observation import main as bench_observation

        print()
        bench_observation(["5000", "20"])


if __name__ == "__main__":
    main()
