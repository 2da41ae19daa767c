"""Overhead of run_command (limits, sandbox, capture, redaction) over a bare ``bash -c true``.

Usage: ``python scripts/bench_run_command.py [N]``. The lead's full bench
imports :func:`bench_run_command` and prints its figures with the others.
"""

from __future__ import annotations

import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from k1412_ls.tools.commands import TOOLS
from k1412_ls.tools.documents import DiskDocumentStore
from k1412_ls.tools.registry import ToolContext, ToolRegistry
from k1412_ls.tools.sandbox import bubblewrap
from k1412_ls.tools.workspace import Workspace


def _mean_ms(samples: list[float]) -> float:
    return statistics.fmean(samples) * 1000


def bench_run_command(n: int = 50) -> dict[str, Any]:
    """Mean wall time of ``n`` run_command calls and ``n`` bare subprocess runs of ``true``, and their ratio."""
    registry = ToolRegistry(TOOLS)
    with tempfile.TemporaryDirectory(prefix="k1412-bench-") as root:
        ctx = ToolContext(workspace=Workspace(Path(root)), documents=DiskDocumentStore())
        registry.execute("run_command", {"command": "true"}, ctx)  # warm-up: sandbox probe, imports
        subprocess.run(["bash", "-c", "true"], check=True)
        bare: list[float] = []
        tool: list[float] = []
        # Interleaved so machine load drifts affect both series alike.
        for _ in range(n):
            started = time.perf_counter()
            subprocess.run(["bash", "-c", "true"], check=True)
            bare.append(time.perf_counter() - started)
            started = time.perf_counter()
            result = registry.execute("run_command", {"command": "true"}, ctx)
            tool.append(time.perf_counter() - started)
            if not result.ok:
                raise RuntimeError(f"run_command failed during the benchmark: {result.data.get('error')}")
    bare_ms, tool_ms = _mean_ms(bare), _mean_ms(tool)
    return {
        "n": n, "sandbox": bubblewrap().label, "bare_mean_ms": round(bare_ms, 3),
        "run_command_mean_ms": round(tool_ms, 3), "ratio": round(tool_ms / bare_ms, 2),
        "run_command_median_ms": round(statistics.median(tool) * 1000, 3),
    }


def main(argv: list[str]) -> int:
    n = int(argv[1]) if len(argv) > 1 else 50
    figures = bench_run_command(n)
    print(f"run_command overhead over N={figures['n']} runs ({figures['sandbox']})")
    print(f"  bare subprocess.run(['bash','-c','true']): mean {figures['bare_mean_ms']:.3f} ms")
    print(f"  run_command 'true':                         mean {figures['run_command_mean_ms']:.3f} ms "
          f"(median {figures['run_command_median_ms']:.3f} ms)")
    print(f"  ratio run_command / bare: {figures['ratio']:.2f}x")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
