"""How fast ``k1412 judge`` judges runs: 500 runs, one process vs two, side by side.

The runs are the real files under the ``shared/trajectories`` folder beside the repository when that
folder exists, repeated in order until there are ``--runs`` of them; otherwise small synthetic
mini-swe-agent runs written to a temporary folder (30 steps each: reads, heredoc writes, test runs).
Each run is parsed, mapped and judged by the gate exactly as ``k1412 judge`` does (``judge_file``);
the shell model's cache is cleared between passes so both pay for parsing.

    python scripts/bench_judge.py [--runs 500] [--workers 2]

Target: 500 runs in 60 s or less on 2 cores.
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
import time
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from k1412_ls.judge.discovery import find_runs  # noqa: E402
from k1412_ls.judge.reading import judge_file  # noqa: E402

SHARED = REPO.parent / "shared" / "trajectories"
TARGET_S = 60.0


def _synthetic(folder: Path, count: int) -> list[tuple[Path, str]]:
    runs: list[tuple[Path, str]] = []
    for index in range(count):
        messages = [{"role": "system", "content": "bash"}, {"role": "user", "content": f"Fix the bug in mod{index}.py"}]
        body = "x = 1\n" * 40
        for step in range(10):
            for command, reply in (
                (f"cat mod{index}.py", f"<returncode>0</returncode>\n<output>\n{body}</output>"),
                (f"cat <<'EOF' > mod{index}.py\nx = {step}\nEOF", "<returncode>0</returncode>\n<output>\n</output>"),
                ("python -m pytest -q tests", "<returncode>0</returncode>\n<output>\n12 passed in 0.1s\n</output>"),
            ):
                messages.append({"role": "assistant", "content": f"THOUGHT: go\n\n```bash\n{command}\n```"})
                messages.append({"role": "user", "content": reply})
        path = folder / f"run{index}.traj.json"
        path.write_text(json.dumps({"messages": messages, "info": {"submission": ""}}))
        runs.append((path, "mini-swe-agent"))
    return runs


def _judge_one(item: tuple[str, str]) -> str:
    return judge_file(Path(item[0]), item[1]).status


def _pass(items: list[tuple[str, str]], workers: int) -> tuple[float, dict[str, int]]:
    from k1412_ls.shell.parse import _parse_cached

    _parse_cached.cache_clear()
    start = time.perf_counter()
    if workers <= 1:
        statuses = [_judge_one(item) for item in items]
    else:
        with ProcessPoolExecutor(max_workers=workers) as pool:
            statuses = list(pool.map(_judge_one, items, chunksize=8))
    elapsed = time.perf_counter() - start
    counts: dict[str, int] = {}
    for status in statuses:
        counts[status] = counts.get(status, 0) + 1
    return elapsed, counts


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("--runs", type=int, default=500)
    parser.add_argument("--workers", type=int, default=2)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="k1412-bench-judge-") as tmp:
        if SHARED.is_dir():
            base = [(path, fmt) for path, fmt in find_runs([SHARED]) if fmt is not None]
            source = f"{len(base)} real runs from {SHARED}, repeated"
        else:
            base = _synthetic(Path(tmp), 50)
            source = "50 synthetic mini-swe-agent runs (the shared folder is absent), repeated"
        items = [(str(base[i % len(base)][0]), str(base[i % len(base)][1])) for i in range(args.runs)]
        print(f"judging {len(items)} runs: {source}")
        one, counts = _pass(items, 1)
        many, _ = _pass(items, args.workers)
    print(f"{'processes':>10} {'seconds':>8} {'runs/s':>8}")
    print(f"{1:>10} {one:>8.1f} {len(items) / one:>8.1f}")
    print(f"{args.workers:>10} {many:>8.1f} {len(items) / many:>8.1f}")
    print(f"speed-up with {args.workers} processes: {one / many:.2f}x · verdicts: {counts}")
    best = min(one, many)
    print(f"{len(items)} runs in {best:.1f} s: {'within' if best <= TARGET_S else 'OVER'} the {TARGET_S:.0f} s target")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
