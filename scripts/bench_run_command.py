"""Overhead of run_command (sandbox, limits, process cap, capture, change tracking, redaction) over a bare run.

Usage: ``python scripts/bench_run_command.py [N] [PAUSE_S]``. ``scripts/bench_tools.py``
imports :func:`bench_run_command` and prints its figures with the others.

Four series, interleaved so load drifts hit them alike: a bare
``subprocess.run(["bash", "-c", "true"])``; the bubblewrap sandbox alone
(``bwrap`` with the exact flags a command gets, running ``bash -c true``);
the whole process chain a command gets, with K1412's Python work done
outside the timing (the trusted ``sh`` launcher moving itself into a fresh
pids cgroup and setting the limits, ``bwrap`` with the exact flags and
seccomp filter, ``bash -o pipefail`` with the observing preamble); and the
real ``run_command`` tool as a run uses it (the run's sandbox and change
tracker as services). Their differences say where the overhead goes: the
sandbox's own start, the rest of the chain, and K1412's Python work
(approval, mount plan, cgroup made and removed, output capture, change
tracking, redaction, result). A fifth series is what a run gets: the
command comes after a model turn (``PAUSE_S``, default 0.15 s, untimed), by
which time the sandbox K1412 started when the last command ended is ready
(``k1412_ls/tools/sandbox/warm_command.py``); the fourth series discards that one first,
so it shows a command in a fresh sandbox. Target: run_command − bare ≤ 10 ms.
"""

from __future__ import annotations

import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from k1412_ls.tools.files.documents import DiskDocumentStore
from k1412_ls.tools.files.workspace import Workspace
from k1412_ls.tools.ports import RunServices
from k1412_ls.tools.processes.child_processes import launcher, shell_argv
from k1412_ls.tools.processes.observe import observed_command
from k1412_ls.tools.processes.run_command import TOOLS
from k1412_ls.tools.registry import ToolContext, ToolRegistry
from k1412_ls.tools.sandbox.command_sandbox import RunSandbox, bubblewrap
from k1412_ls.tools.sandbox.confinement import confined_argv
from k1412_ls.tools.sandbox.process_cap import ProcessCap
from k1412_ls.tools.sandbox.seccomp import command_filter, filter_fd
from k1412_ls.tools.undo.changes import RunChanges


def _mean_ms(samples: list[float]) -> float:
    return statistics.fmean(samples) * 1000


def _median_ms(samples: list[float]) -> float:
    return statistics.median(samples) * 1000


def _run_chain(sandbox: RunSandbox, ws: Path) -> float:
    """One command's process chain as ``spawn`` starts it, timed from the exec of the launcher to its exit."""
    records = tempfile.TemporaryFile()
    confined = confined_argv(shell_argv(observed_command("true", records.fileno())), sandbox, ws, ws)
    cap = ProcessCap(sandbox.policy.max_processes)
    argv, preexec = launcher(confined.argv, cap.prepare())
    try:
        started = time.perf_counter()
        subprocess.run(argv, check=True, cwd=ws, env={"PATH": "/usr/bin:/bin", **confined.env}, preexec_fn=preexec,
                       stdin=subprocess.DEVNULL, start_new_session=True, pass_fds=(records.fileno(), *confined.fds))
        return time.perf_counter() - started
    finally:
        cap.close()
        for fd in confined.fds:
            os.close(fd)
        confined.release()
        records.close()


def bench_run_command(n: int = 50, pause_s: float = 0.15) -> dict[str, Any]:
    """Mean wall times of ``n`` runs of each series, the overhead and the ratio."""
    registry = ToolRegistry(TOOLS)
    with tempfile.TemporaryDirectory(prefix="k1412-bench-") as root:
        ws = Path(root)
        sandbox = RunSandbox()
        changes = RunChanges(ws)
        ctx = ToolContext(workspace=Workspace(ws), documents=DiskDocumentStore(ws),
                          services=RunServices(sandbox=sandbox, changes=changes))
        registry.execute("run_command", {"command": "true"}, ctx)  # warm-up: sandbox probe, imports
        confined = confined_argv(["bash", "-c", "true"], sandbox, ws, ws)
        boxed, env = confined.argv, confined.env
        for fd in confined.fds:
            os.close(fd)
        seccomp_at = boxed.index("--seccomp") + 1 if "--seccomp" in boxed else None
        bare: list[float] = []
        box: list[float] = []
        tool: list[float] = []
        chain: list[float] = []
        after_turn: list[float] = []
        served_before = sandbox.warm_served
        try:
            for _ in range(n):
                # A command after a model turn (the model read the last result and answered): by then the
                # sandbox K1412 started ahead when the last command ended is ready.
                time.sleep(pause_s)
                started = time.perf_counter()
                result = registry.execute("run_command", {"command": "true"}, ctx)
                after_turn.append(time.perf_counter() - started)
                if not result.ok:
                    raise RuntimeError(f"run_command failed during the benchmark: {result.data.get('error')}")
                started = time.perf_counter()
                subprocess.run(["bash", "-c", "true"], check=True)
                bare.append(time.perf_counter() - started)
                started = time.perf_counter()
                fds: tuple[int, ...] = ()
                if seccomp_at is not None:  # bwrap reads the filter to its end: a fresh copy per run
                    fds = (filter_fd(command_filter(sandbox.policy.network)),)
                    boxed[seccomp_at] = str(fds[0])
                subprocess.run(boxed, check=True, env={"PATH": "/usr/bin:/bin", **env}, pass_fds=fds)
                for fd in fds:
                    os.close(fd)
                box.append(time.perf_counter() - started)
                chain.append(_run_chain(sandbox, ws))
                kept = sandbox.take_warm()  # this series measures a command in a fresh sandbox
                if kept is not None:
                    kept.discard()
                started = time.perf_counter()
                result = registry.execute("run_command", {"command": "true"}, ctx)
                tool.append(time.perf_counter() - started)
                if not result.ok:
                    raise RuntimeError(f"run_command failed during the benchmark: {result.data.get('error')}")
        finally:
            changes.close()
            sandbox.close()
    served = sandbox.warm_served - served_before
    bare_ms, box_ms, tool_ms = _mean_ms(bare), _mean_ms(box), _mean_ms(tool)
    return {
        "pause_s": pause_s, "kept_sandbox_used": served, "calls": n,
        "after_turn_median_ms": round(_median_ms(after_turn), 3),
        "after_turn_overhead_median_ms": round(_median_ms(after_turn) - _median_ms(bare), 3),
        "after_turn_overhead_mean_ms": round(_mean_ms(after_turn) - bare_ms, 3),
        "n": n, "sandbox": bubblewrap().label, "bare_mean_ms": round(bare_ms, 3), "bwrap_mean_ms": round(box_ms, 3),
        "run_command_mean_ms": round(tool_ms, 3), "ratio": round(tool_ms / bare_ms, 2),
        "overhead_ms": round(tool_ms - bare_ms, 3),
        "overhead_median_ms": round((statistics.median(tool) - statistics.median(bare)) * 1000, 3),
        "bwrap_overhead_median_ms": round((statistics.median(box) - statistics.median(bare)) * 1000, 3),
        "run_command_median_ms": round(statistics.median(tool) * 1000, 3),
        "chain_mean_ms": round(_mean_ms(chain), 3),
        # Medians of the parts: the sandbox's own start, the rest of the process chain, K1412's Python work.
        "breakdown_median_ms": {
            "sandbox_start": round(_median_ms(box) - _median_ms(bare), 3),
            "launcher_cgroup_limits_preamble": round(_median_ms(chain) - _median_ms(box), 3),
            "python_work": round(_median_ms(tool) - _median_ms(chain), 3),
        },
    }


def main(argv: list[str]) -> int:
    n = int(argv[1]) if len(argv) > 1 else 50
    pause_s = float(argv[2]) if len(argv) > 2 else 0.15
    figures = bench_run_command(n, pause_s)
    print(f"run_command overhead over N={figures['n']} runs ({figures['sandbox']})")
    print(f"  bare subprocess.run(['bash','-c','true']): mean {figures['bare_mean_ms']:.3f} ms")
    print(f"  bwrap sandbox alone, same flags:            mean {figures['bwrap_mean_ms']:.3f} ms")
    print(f"  the whole chain, Python work left out:      mean {figures['chain_mean_ms']:.3f} ms")
    print(f"  run_command 'true' in a fresh sandbox:      mean {figures['run_command_mean_ms']:.3f} ms "
          f"(median {figures['run_command_median_ms']:.3f} ms)")
    print(f"  overhead in a fresh sandbox - bare: mean {figures['overhead_ms']:.3f} ms, median "
          f"{figures['overhead_median_ms']:.3f} ms, of which the sandbox's own start "
          f"{figures['bwrap_overhead_median_ms']:.3f} ms; ratio {figures['ratio']:.2f}x")
    parts = figures["breakdown_median_ms"]
    print(f"  where it goes (medians): sandbox start {parts['sandbox_start']:.3f} ms, launcher + cgroup entry + "
          f"limits + observing preamble {parts['launcher_cgroup_limits_preamble']:.3f} ms, K1412's Python work "
          f"{parts['python_work']:.3f} ms")
    print(f"  run_command after a {figures['pause_s'] * 1000:.0f} ms model turn (its sandbox started ahead): median "
          f"{figures['after_turn_median_ms']:.3f} ms; overhead over bare: median "
          f"{figures['after_turn_overhead_median_ms']:.3f} ms, mean {figures['after_turn_overhead_mean_ms']:.3f} ms "
          f"(target <= 10 ms)")
    print(f"  commands after a model turn that ran in the sandbox started ahead: {figures['kept_sandbox_used']} of "
          f"{figures['calls']}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
