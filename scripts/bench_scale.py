"""list_files and search_files on a 100,000-file workspace against find and rg, side by side in one run.

    python scripts/bench_scale.py [--files 100000] [--reps 5] [--tree DIR] [--fallback-reps 1]

The tree is bench_tools.py's deterministic one at 100k files (400 directories of 250 files,
``.gitignore`` with ``build/`` and ``*.log``: 10 % ignored). Rows, medians of interleaved reps:

* ``list_files`` (the real tool through :class:`ToolRegistry`, depth 20) with a rare glob that makes
  it walk the whole tree (``file_0000*.py``) against ``find . -name 'file_0000*.py'``; with a
  common glob (``*.py``, stops at the 2,000-entry cap) and without a glob against the same
  ``find``s. Target: <= 1.5x find for the full walk.
* ``search_files`` against bare ``rg`` with the same command line (bench_tools.bench_search):
  a rare query (whole tree) and a common one (first 100). Target: <= 1.2x rg.
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))
sys.path.insert(0, str(REPO / "scripts"))

import bench_tools  # noqa: E402
from bench_tools import Row, median, timed  # noqa: E402

from k1412_ls.tools.files.documents import DiskDocumentStore  # noqa: E402
from k1412_ls.tools.files.file_tools import TOOLS as FILE_TOOLS  # noqa: E402
from k1412_ls.tools.files.workspace import Workspace  # noqa: E402
from k1412_ls.tools.registry import ToolContext, ToolRegistry  # noqa: E402

LIST_TARGET = 1.5


def find_ms(root: Path, pattern: str | None) -> tuple[float, int]:
    argv = ["find", ".", "-name", pattern] if pattern else ["find", "."]
    ms, done = timed(lambda: subprocess.run(argv, cwd=root, capture_output=True, check=True))
    return ms, done.stdout.count(b"\n")


def bench_list(root: Path, reps: int) -> list[Row]:
    registry = ToolRegistry(FILE_TOOLS)
    ctx = ToolContext(workspace=Workspace(root), documents=DiskDocumentStore(root))
    rows = []
    cases = [("list_files glob file_0000*.py (whole tree)", "file_0000*.py", LIST_TARGET),
             ("list_files glob *.py (stops at the cap)", "*.py", None),
             ("list_files no glob (stops at the cap)", None, None)]
    for label, glob, target in cases:
        args = {"path": ".", "depth": 20, **({"glob": glob} if glob else {})}
        first = registry.execute("list_files", args, ctx)
        if not first.ok:
            raise RuntimeError(f"list_files failed: {first.data}")
        tool, base = [], []
        for _ in range(reps):
            tool.append(timed(lambda a=args: registry.execute("list_files", a, ctx))[0])
            ms, found = find_ms(root, glob)
            base.append(ms)
        print(f"  {label}: {first.data['count']} entries (truncated {first.data['truncated']}), "
              f"find printed {found}")
        rows.append(Row(label, median(tool), f"find -name {glob}" if glob else "find", median(base), target))
    return rows


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--files", type=int, default=100_000)
    parser.add_argument("--reps", type=int, default=5)
    parser.add_argument("--tree", help="keep the generated tree in this directory and reuse it next time")
    parser.add_argument("--fallback-reps", type=int, default=1,
                        help="repetitions of the pure-Python search (information only; 0 skips it)")
    args = parser.parse_args()
    bench_tools.TREE_FILES = args.files
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(args.tree).resolve() if args.tree else Path(tmp).resolve()
        marker = root.with_name(f"{root.name}.bench-{args.files}")  # beside the tree: not one of its files
        began = time.perf_counter()
        if marker.is_file():
            print(f"tree: reusing {root} ({args.files} files)")
        else:
            if args.tree and root.exists() and any(root.iterdir()):
                raise SystemExit(f"{root} is not empty and holds no tree of {args.files} files from this script.")
            root.mkdir(parents=True, exist_ok=True)
            counts = bench_tools.make_tree(root)
            print(f"tree: {counts['files']} files ({counts['bytes'] / 1e6:.1f} MB) in "
                  f"{time.perf_counter() - began:.1f} s")
            if args.tree:
                marker.write_text("")
        print(f"python {sys.version.split()[0]}, {os.cpu_count()} cpus")
        rows = bench_list(root, args.reps)
        search_rows, notes = bench_tools.bench_search(root, args.reps, args.fallback_reps, False)
        rows += [row for row in search_rows if row.target is not None]
    print("search_files: ripgrep inside the readers' sandbox (bubblewrap), --null records (no --json), in a "
          "session of its own; baseline: the same rg argv, unsandboxed, in a session of its own")
    for note in notes:
        print(f"  {note}")
    print(f"{'case':<48} {'k1412':>10} {'baseline':>26} {'ratio':>7}  target")
    for row in rows:
        target = f"<= {row.target:.1f}x {row.verdict}" if row.target else "(no target)"
        print(f"{row.name:<48} {row.tool_ms:>7.1f} ms {row.base_name:>20} {row.base_ms:>6.1f} ms "
              f"{row.ratio:>6.2f}x  {target}")


if __name__ == "__main__":
    main()
