"""Per-command cost of the evidence machinery of run_command, measured side by side in one run.

Usage: ``python scripts/bench_observation.py [FILES] [N]`` (defaults: 5000 files, 30 commands).

Prints, for a generated workspace of FILES files:
- change tracking: one workspace snapshot, and the two snapshots plus the diff a command costs;
- status observation: ``run_command``-style execution of ``true`` with and without the observing
  bash preamble (same sandbox, same limits), and the difference;
- the ledger's side: parsing a typical command line with the shell model and judging its outcome.
Target: observation + change tracking <= 5 ms per command on 5,000 files.
"""

from __future__ import annotations

import os
import statistics
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from k1412_ls.core.evidence.invocations import command_shape
from k1412_ls.core.evidence.line_outcomes import line_outcome
from k1412_ls.shell import parse_line
from k1412_ls.text.runner_summaries import parse_summary
from k1412_ls.tools.processes.child_processes import run_to_end, shell_argv
from k1412_ls.tools.processes.observe import fileno, observed_command, read_records, status_file
from k1412_ls.tools.undo.changes import ChangeTracker, Snapshot


def make_workspace(root: Path, files: int) -> None:
    per_dir = 50
    for index in range(files):
        directory = root / f"pkg{index // per_dir:03d}"
        directory.mkdir(exist_ok=True)
        (directory / f"mod{index % per_dir:02d}.py").write_text(f"X = {index}\n")


def ms(samples: list[float]) -> float:
    return statistics.median(samples) * 1000


def main(argv: list[str]) -> int:
    files = int(argv[0]) if argv else 5000
    n = int(argv[1]) if len(argv) > 1 else 30
    with tempfile.TemporaryDirectory(prefix="k1412-bench-obs-") as tmp:
        root = Path(tmp)
        make_workspace(root, files)
        env = {"PATH": os.environ.get("PATH", "/usr/bin:/bin"), "HOME": tmp}
        snap: list[float] = []
        track: list[float] = []
        live: list[float] = []
        started = time.perf_counter()
        tracker = ChangeTracker(root)
        setup = time.perf_counter() - started
        plain: list[float] = []
        observed: list[float] = []
        for _ in range(n):  # interleaved, so load drifts hit every series alike
            started = time.perf_counter()
            before = Snapshot.take(root)
            snap.append(time.perf_counter() - started)
            after = Snapshot.take(root)
            before.changes(after)
            track.append(time.perf_counter() - started)

            started = time.perf_counter()
            token = tracker.begin()
            (root / "pkg000" / "mod00.py").write_text("X = 1\n")  # the command's write
            tracker.end(token)
            live.append(time.perf_counter() - started)

            started = time.perf_counter()
            run_to_end(shell_argv("true"), root, env, timeout_s=30)
            plain.append(time.perf_counter() - started)

            handle = status_file()
            started = time.perf_counter()
            fd = fileno(handle)
            run_to_end(shell_argv(observed_command("true", fd)), root, env, timeout_s=30, pass_fds=(fd,))
            read_records(handle)
            observed.append(time.perf_counter() - started)
            handle.close()
        tracker_live = tracker.live
        line = "cd sub && python3 -m pytest -q 2>&1 | tail -5; echo done"
        output = "...\n3 passed in 0.02s\n"
        parse: list[float] = []
        for index in range(n * 10):
            text = f"{line} # {index}"  # defeat the cache: every line is new
            started = time.perf_counter()
            parse_line(text)
            shape = command_shape(text)
            line_outcome(shape, 0, False, [{"argv": ["python3", "-m", "pytest", "-q"], "status": 0}],
                         parse_summary(output), output)
            parse.append(time.perf_counter() - started)
    tracker.close()
    observation = ms(observed) - ms(plain)
    tracking = ms(live) if tracker_live else ms(track)
    print(f"workspace: {files} files; {n} commands per series (medians)")
    print(f"  fallback: one snapshot:               {ms(snap):7.2f} ms")
    print(f"  fallback: 2 snapshots + diff:         {ms(track):7.2f} ms")
    print(f"  inotify tracker: start (once per run):{setup * 1000:7.2f} ms")
    print(f"  inotify tracker: per command:         {ms(live):7.2f} ms  ({ms(track) / max(ms(live), 1e-6):.0f}x "
          f"less than the fallback){'' if tracker_live else '  (inotify unavailable here)'}")
    print(f"  `true` without observation:           {ms(plain):7.2f} ms")
    print(f"  `true` with observation preamble:     {ms(observed):7.2f} ms  (ratio {ms(observed) / ms(plain):.2f}x)")
    print(f"  status observation cost:              {observation:7.2f} ms")
    print(f"  ledger: parse + judge one line:       {ms(parse):7.3f} ms")
    total = observation + tracking
    print(f"  observation + tracking per command:   {total:7.2f} ms; target <= 5 ms: "
          f"{'met' if total <= 5 else 'NOT met'}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
