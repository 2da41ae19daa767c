"""A long scripted run for the context budget: many big reads and outputs, one early write verified late.

Used by ``tests/core/test_context_budget.py`` (through the real CLI) and by
``scripts/bench_context.py``. The default shape is the acceptance run of the
context policy: 60 model requests, a write at step 1, 30 reads of 14 KB
files, 10 commands printing 9 KB each, small steps between them, the write
verified (run) at step 58 and the answer at step 60.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from itertools import pairwise
from pathlib import Path
from typing import Any

from tests.support.scripted_server import request_chars

TASK = "Create summary.py that prints the word done, then run it."
ANSWER = "I created summary.py and ran it with python3 summary.py; it printed done."
SCRIPT_PATH = "summary.py"
SCRIPT_CONTENT = "print('done')\n"


def _module_text(index: int, size: int) -> str:
    """About ``size`` characters of distinct Python-looking source."""
    lines: list[str] = [f'"""Module {index}: generated for the long-run context test."""', ""]
    number = 0
    while sum(len(line) + 1 for line in lines) < size:
        number += 1
        lines.append(f"def function_{index}_{number}(value: int) -> int:")
        lines.append(f"    \"\"\"Return value scaled by {number} for module {index}.\"\"\"")
        lines.append(f"    return value * {number} + {index}")
        lines.append("")
    return "\n".join(lines) + "\n"


def make_workspace(root: Path, reads: int = 30, read_bytes: int = 14_000) -> None:
    """The files the run reads: ``src/module_NN.py``, each about ``read_bytes`` long."""
    (root / "src").mkdir(parents=True, exist_ok=True)
    for index in range(reads):
        (root / "src" / f"module_{index:02d}.py").write_text(_module_text(index, read_bytes), encoding="utf-8")


def _call(name: str, **arguments: Any) -> dict[str, Any]:
    return {"tool_calls": [{"name": name, "arguments": arguments}]}


def make_script(steps: int = 60, reads: int = 30, commands: int = 10, output_bytes: int = 9_000,
                verify_at: int = 58) -> list[dict[str, Any]]:
    """``steps`` replies: write at 1, reads and commands spread out, small steps between, verify, answer."""
    work: list[dict[str, Any]] = [_call("read_file", path=f"src/module_{i:02d}.py") for i in range(reads)]
    # Commands that print without running code: nothing but the step-58 run can verify the step-1 write.
    runs = [_call("run_command", command=f"head -c {output_bytes} src/module_{(reads - 1 - i) % reads:02d}.py")
            for i in range(commands)]
    for position, run in enumerate(runs):
        work.insert(min(len(work), 3 + position * 4), run)
    fillers = steps - 3 - len(work)
    for i in range(max(0, fillers)):
        filler = _call("stat_path", path=f"src/module_{i % reads:02d}.py") if i % 2 else _call("list_files", path="src")
        work.insert(min(len(work), 2 + i * 3), filler)
    script = [_call("write_file", path=SCRIPT_PATH, content=SCRIPT_CONTENT), *work]
    script.insert(verify_at - 1, _call("run_command", command=f"python3 {SCRIPT_PATH}"))
    script = script[: steps - 1]
    script.append({"content": ANSWER})
    return script


@dataclass
class RequestStats:
    """What a run sent: request sizes, how many requests extended the previous one byte for byte, and how
    many characters repeated the previous request's leading messages (what a prompt cache can reuse)."""

    requests: int
    total_chars: int
    largest_chars: int
    extending: int
    reused_chars: int = 0

    @property
    def extend_share(self) -> float:
        return self.extending / max(1, self.requests - 1)

    @property
    def reused_share(self) -> float:
        return self.reused_chars / max(1, self.total_chars)


def _canonical(message: dict[str, Any]) -> str:
    return json.dumps(message, ensure_ascii=False, sort_keys=True)


def extends(previous: list[dict[str, Any]], current: list[dict[str, Any]]) -> bool:
    """True when ``current`` starts with every message of ``previous``, unchanged."""
    if len(current) < len(previous):
        return False
    return all(_canonical(a) == _canonical(b) for a, b in zip(previous, current, strict=False))


def shared_prefix_chars(before: dict[str, Any], after: dict[str, Any]) -> int:
    """Characters of ``after`` (schemas, then leading messages) identical to the start of ``before``."""
    if json.dumps(before.get("tools"), sort_keys=True) != json.dumps(after.get("tools"), sort_keys=True):
        return 0
    size = request_chars({"tools": after.get("tools")})
    for old, new in zip(before.get("messages") or [], after.get("messages") or [], strict=False):
        if _canonical(old) != _canonical(new):
            break
        size += request_chars({"messages": [new]})
    return size


def request_stats(bodies: list[dict[str, Any]]) -> RequestStats:
    """Sizes (as :func:`request_chars` counts them) and prefix reuse of a run's chat request bodies."""
    sizes = [request_chars(body) for body in bodies]
    extending = sum(1 for before, after in pairwise(bodies)
                    if extends(before.get("messages") or [], after.get("messages") or []))
    reused = sum(shared_prefix_chars(before, after) for before, after in pairwise(bodies))
    return RequestStats(len(bodies), sum(sizes), max(sizes, default=0), extending, reused)


__all__ = ["ANSWER", "SCRIPT_PATH", "TASK", "RequestStats", "extends", "make_script", "make_workspace",
           "request_stats", "shared_prefix_chars"]
