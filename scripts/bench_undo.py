"""What undo costs: the baseline a run keeps before its first command, and undoing a run.

Builds a workspace of N text files, then measures in one process:
- the baseline the first time (every file read, hashed and stored) and again (the index lets
  unchanged files be skipped), and the bytes kept;
- the refresh before a later command when the tracker has no inotify (every baseline file stat'ed);
- recording and undoing a run that changed 100 files by "command".

Usage: python scripts/bench_undo.py [N_FILES] [FILE_BYTES]
"""

from __future__ import annotations

import os
import sys
import tempfile
import time
from pathlib import Path

from k1412_ls.core.undo_result import undo_on_disk
from k1412_ls.tools.undo.preimages import RunJournal


def median_ms(samples: list[float]) -> float:
    ordered = sorted(samples)
    return ordered[len(ordered) // 2] * 1000


def main() -> int:
    files = int(sys.argv[1]) if len(sys.argv) > 1 else 5000
    size = int(sys.argv[2]) if len(sys.argv) > 2 else 2048
    with tempfile.TemporaryDirectory() as tmp:
        root, state = Path(tmp) / "ws", Path(tmp) / "state"
        for i in range(files):
            path = root / f"pkg{i % 50}" / f"mod{i}.py"
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_bytes((f"# module {i}\n".encode() * (size // 12 + 1))[:size])
        (state / "runs").mkdir(parents=True)

        cold = RunJournal("run-bench-cold", root, state)
        started = time.perf_counter()
        cold.take_baseline()
        cold_s = time.perf_counter() - started
        kept = sum(p.stat().st_size for p in (state / "undo" / "blobs").glob("*/*"))

        warm_samples = []
        for n in range(3):
            warm = RunJournal(f"run-bench-warm{n}", root, state)
            started = time.perf_counter()
            warm.take_baseline()
            warm_samples.append(time.perf_counter() - started)

        refresh_samples = []
        for _ in range(3):
            started = time.perf_counter()
            warm.refresh(None)
            refresh_samples.append(time.perf_counter() - started)

        changed = [f"pkg{i % 50}/mod{i}.py" for i in range(0, files, max(1, files // 100))][:100]
        for rel in changed:
            (root / rel).write_text("changed\n")
        warm.command_changes([(rel, "update") for rel in changed], True)
        warm.finish()
        (state / "runs" / "run-bench-warm2.jsonl").write_text("")
        started = time.perf_counter()
        result = undo_on_disk(state, "run-bench-warm2")
        undo_s = time.perf_counter() - started
        assert result["ok"] and len(result["restored"]) == len(changed), result["message"]

    print(f"workspace: {files} files of {size} bytes ({files * size / 1e6:.1f} MB)")
    print(f"baseline, first run:        {cold_s * 1000:8.1f} ms  ({kept / 1e6:.1f} MB kept)")
    print(f"baseline, next runs:        {median_ms(warm_samples):8.1f} ms  (median of 3; index hits)")
    print(f"refresh before a command:   {median_ms(refresh_samples):8.1f} ms  (no inotify: every file stat'ed)")
    print(f"undo of {len(changed)} changed files:   {undo_s * 1000:8.1f} ms")
    print(f"first/next baseline ratio:  {cold_s / max(median_ms(warm_samples) / 1000, 1e-9):8.1f}x")
    os.sync()
    return 0


if __name__ == "__main__":
    sys.exit(main())
