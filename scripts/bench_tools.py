"""Workspace tools against their native baselines, side by side in one run (issue benchmark).

    python scripts/bench_tools.py [--reps 9] [--fallback-reps 3] [--run-command-n 50] [--profile]

Three measurements, each on deterministic generated data in a temporary directory:

* ``search_files`` (the real tool through :class:`ToolRegistry`, ripgrep backend) against ``rg``
  run directly with the very same command line (:func:`k1412_ls.tools.files.search.rg_command`) on a
  20,000-file tree with a ``.gitignore``. Two queries: a rare one whose matches all fit in
  ``max_results=1000`` (both sides search the whole tree), and a common one with the default
  ``max_results=100`` (the tool stops after 101 matches, so the bare ``rg`` is stopped after 101
  records too). Target: tool <= 1.2x rg. The pure-Python fallback (forced by hiding ``rg`` from
  the tool) is timed on the same queries for information only.
* ``apply_patch`` (in process, 20 update chunks spread through a ~5 MB, 100k-line file) against
  ``git apply`` of the equivalent unified diff (a subprocess, so its start cost is included; the
  figure minus a bare ``git version`` start is printed too). Every repetition starts from a fresh
  copy and both results are checked byte for byte against the expected file. Target: <= 2x.
* ``run_command`` overhead over a bare ``subprocess.run`` (:mod:`bench_run_command`); the ratio
  is printed, there is no target.

Medians of interleaved repetitions are reported (means for run_command). A missed target (or
``--profile``) prints the top cProfile hotspots of the tool side. The whole run takes well under
two minutes on two cores.
"""

from __future__ import annotations

import argparse
import cProfile
import io
import os
import platform
import pstats
import random
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any
from unittest import mock

from k1412_ls.tools.files import search
from k1412_ls.tools.files.apply_patch import TOOLS as PATCH_TOOLS
from k1412_ls.tools.files.documents import DiskDocumentStore
from k1412_ls.tools.files.workspace import Workspace
from k1412_ls.tools.registry import ToolContext, ToolRegistry, ToolResult

sys.path.insert(0, str(Path(__file__).resolve().parent))
from bench_run_command import bench_run_command

SEARCH_TARGET = 1.2
PATCH_TARGET = 2.0

TREE_FILES = 20_000
RARE_QUERY = "rare_marker(k1412)"  # parentheses: a fixed string, not a regex
COMMON_QUERY = "common_token"
WORDS = ("alpha", "beta", "gamma", "delta", "value", "result", "index", "buffer", "config", "handler",
         "return", "import", "self", "data", "items", "count", "total", "name", "path", "error")

PATCH_LINES = 100_000
PATCH_CHUNKS = 20
PATCH_FILE = "big_module.py"  # source: write facts scan only its start for numbers
REPORT_FILE = "big_notes.txt"  # a report path: its numbers are scanned whole (information row)


# --- helpers -------------------------------------------------------------------------------------


@dataclass
class Row:
    """One line of the summary table."""

    name: str
    tool_ms: float
    base_name: str
    base_ms: float
    target: float | None

    @property
    def ratio(self) -> float:
        return self.tool_ms / self.base_ms

    @property
    def verdict(self) -> str:
        if self.target is None:
            return "(no target)"
        return "met" if self.ratio <= self.target else "NOT met"


def timed(action: Callable[[], Any]) -> tuple[float, Any]:
    """Wall time of one call in milliseconds, and its result."""
    started = time.perf_counter()
    result = action()
    return (time.perf_counter() - started) * 1000, result


def median(samples: list[float]) -> float:
    return statistics.median(samples)


def spread(samples: list[float]) -> str:
    return f"min {min(samples):.1f} / max {max(samples):.1f}"


def hotspots(action: Callable[[], Any], top: int = 12) -> str:
    """The ``top`` functions by own time (then cumulative) while running ``action`` once."""
    profiler = cProfile.Profile()
    profiler.enable()
    action()
    profiler.disable()
    out = io.StringIO()
    stats = pstats.Stats(profiler, stream=out).strip_dirs()
    stats.sort_stats("tottime").print_stats(top)
    out.write("--- by cumulative time ---\n")
    stats.sort_stats("cumulative").print_stats(top)
    return out.getvalue()


def words(rng: random.Random, count: int) -> str:
    return " ".join(rng.choice(WORDS) for _ in range(count))


# --- search_files vs rg --------------------------------------------------------------------------


def make_tree(root: Path) -> dict[str, int]:
    """Write the deterministic 20k-file tree; return counts of files, bytes and planted matches."""
    rng = random.Random(1412)
    (root / ".gitignore").write_text("build/\n*.log\n")
    files = bytes_written = rare = common = 0
    for index in range(TREE_FILES):
        if index % 10 == 9:  # 10% of the files are ignored: half under build/, half *.log
            if index % 20 == 9:
                rel = f"build/out_{index % 7}/gen_{index:05d}.py"
            else:
                rel = f"pkg_{index % 20:02d}/mod_{(index // 20) % 20:02d}/trace_{index:05d}.log"
            ignored = True
        else:
            rel = f"pkg_{index % 20:02d}/mod_{(index // 20) % 20:02d}/file_{index:05d}.py"
            ignored = False
        lines = [f"# file {index} {words(rng, 3)}"]
        for number in range(rng.randint(4, 12)):
            line = f"    {words(rng, rng.randint(2, 6))} = {number}"
            if number == 2 and index % 37 == 0:
                line += f"  # {RARE_QUERY}"
                rare += not ignored
            if index % 3 == 0 and number % 2 == 1:
                line += f"  # {COMMON_QUERY}"
                common += not ignored
            lines.append(line)
        data = ("\n".join(lines) + "\n").encode()
        path = root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(data)
        files += 1
        bytes_written += len(data)
    return {"files": files, "bytes": bytes_written, "rare": rare, "common": common}


def rg_bare(argv: list[str], root: Path, limit: int | None) -> list[tuple[str, int]]:
    """Run ripgrep directly; with ``limit``, stop it after that many records (like ``| head -n``).

    In a session of its own, as search_files starts its ripgrep: with the kernel's autogroup
    scheduling a new session gets its own CPU share, which on a loaded machine is worth up to a
    third of ripgrep's time, so both sides get it.
    """
    if limit is None:
        done = subprocess.run(argv, cwd=root, stdin=subprocess.DEVNULL, capture_output=True, check=False,
                              start_new_session=True)
        data = done.stdout
    else:
        proc = subprocess.Popen(argv, cwd=root, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                                stderr=subprocess.DEVNULL, start_new_session=True)
        assert proc.stdout is not None
        chunks: list[bytes] = []
        seen = 0
        while seen < limit:
            chunk = proc.stdout.read1(1 << 16)
            if not chunk:
                break
            chunks.append(chunk)
            seen += chunk.count(b"\n")
        proc.kill()
        proc.stdout.close()
        proc.wait()
        data = b"".join(chunks)
    records = data.split(b"\n")[:-1]
    if limit is not None:
        records = records[:limit]
    out = []
    for record in records:
        path, rest = record.split(b"\0", 1)
        out.append((os.path.normpath(path.decode()), int(rest.split(b":", 1)[0])))
    return out


def tool_pairs(result: ToolResult) -> list[tuple[str, int]]:
    if not result.ok:
        raise RuntimeError(f"search_files failed: {result.data.get('error')}")
    return [(m["path"], m["line"]) for m in result.data["matches"]]


def bench_search(root: Path, reps: int, fallback_reps: int, profile: bool) -> tuple[list[Row], list[str]]:
    """Time search_files (rg and Python backends) against bare rg; return rows and notes.

    The tool side runs ripgrep inside K1412's readers' sandbox (bubblewrap, kept between searches: see
    ``tools.sandbox.reader_sandbox``) and parses its ``--null`` records (no ``--json`` on either side); the rg side
    runs the same command line with no sandbox and splits the same records.
    """
    rg = shutil.which("rg")
    if rg is None:
        raise SystemExit("rg is not installed; the search benchmark compares against it.")
    registry = ToolRegistry(search.TOOLS)
    ctx = ToolContext(workspace=Workspace(root), documents=DiskDocumentStore(root))
    rows: list[Row] = []
    notes: list[str] = []
    cases = [("rare, all matches (max_results=1000)", RARE_QUERY, 1000),
             ("common, first 100 (max_results=100)", COMMON_QUERY, 100)]
    for label, query, max_results in cases:
        args = {"query": query, "max_results": max_results}
        argv = search.rg_command(rg, ctx.workspace.root, ctx.workspace.root, query, False, None)
        # The tool asks for max_results + 1 matches; the bare run is limited alike when that bites.
        first_ms, first = timed(lambda a=args: registry.execute("search_files", a, ctx))  # warm-up (page cache,
        # imports, and the first search starts the kept readers' sandbox: its cost is printed in the notes)
        limit = max_results + 1 if first.data.get("truncated") else None
        expected = rg_bare(argv, root, limit)
        if tool_pairs(first) != expected[:max_results]:
            raise RuntimeError(f"search_files and rg disagree on {query!r}")
        tool_ms: list[float] = []
        rg_ms: list[float] = []
        # A stopped search takes a few ms: more repetitions keep its median steady.
        for _ in range(reps if limit is None else 4 * reps):  # interleaved: load drift hits both alike
            ms, _r = timed(lambda a=argv, n=limit: rg_bare(a, root, n))
            rg_ms.append(ms)
            ms, _r = timed(lambda a=args: registry.execute("search_files", a, ctx))
            tool_ms.append(ms)
        row = Row(f"search_files {label}", median(tool_ms), "rg, same argv" + (f", stopped at {limit}" if limit
                                                                             else ""), median(rg_ms), SEARCH_TARGET)
        rows.append(row)
        notes.append(f"search '{query}': {first.data['count']} matches shown, truncated={first.data['truncated']}; "
                     f"tool {spread(tool_ms)} ms (first call {first_ms:.1f} ms), rg {spread(rg_ms)} ms")
        if profile or row.verdict == "NOT met":
            notes.append(f"cProfile of search_files '{query}':\n"
                         + hotspots(lambda a=args: registry.execute("search_files", a, ctx)))

        # Information only: the pure-Python fallback (rg hidden from the tool) ...
        with mock.patch.object(search, "trusted_program", return_value=None):
            py_ms: list[float] = []
            for _ in range(fallback_reps):
                ms, result = timed(lambda a=args: registry.execute("search_files", a, ctx))
                py_ms.append(ms)
                if result.data.get("backend") != "python" or tool_pairs(result) != expected[:max_results]:
                    raise RuntimeError(f"the Python fallback disagrees with rg on {query!r}")
        if py_ms:
            rows.append(Row(f"  python fallback, {label}", median(py_ms), row.base_name, median(rg_ms), None))
        # ... and rg without --sort path (multi-threaded, unordered), to show what the sort costs.
        if limit is None:
            unsorted = [a for a in argv if a not in ("--sort", "path")]
            un_ms = [timed(lambda u=unsorted: rg_bare(u, root, None))[0] for _ in range(reps)]
            rows.append(Row("  rg same argv (sorted by path)", median(rg_ms), "rg without --sort path",
                            median(un_ms), None))
    return rows, notes


# --- apply_patch vs git apply --------------------------------------------------------------------


def make_patch_inputs(name: str) -> tuple[bytes, str, str, bytes]:
    """The original file, the Codex patch, the equivalent unified diff and the expected result."""
    rng = random.Random(2024)
    lines = []
    for number in range(PATCH_LINES):
        indent = "    " * (number % 3)
        lines.append(f'{indent}line_{number:06d} = "{words(rng, 5)}"')
    original = ("\n".join(lines) + "\n").encode()
    step = PATCH_LINES // PATCH_CHUNKS
    codex = ["*** Begin Patch", f"*** Update File: {name}"]
    unified = [f"--- a/{name}", f"+++ b/{name}"]
    result = list(lines)
    shift = 0
    for chunk in range(PATCH_CHUNKS):
        at = step // 2 + chunk * step  # first replaced line (0-based): two lines out, three in
        before, old, after = lines[at - 3:at], lines[at:at + 2], lines[at + 2:at + 5]
        new = [f"{old[0]}  # edited {chunk}", f"inserted_{chunk} = True", old[1].replace("=", "==", 1)]
        codex.append("@@")
        codex += [f" {x}" for x in before] + [f"-{x}" for x in old] + [f"+{x}" for x in new]
        codex += [f" {x}" for x in after]
        unified.append(f"@@ -{at - 3 + 1},{3 + 2 + 3} +{at - 3 + 1 + shift},{3 + 3 + 3} @@")
        unified += [f" {x}" for x in before] + [f"-{x}" for x in old] + [f"+{x}" for x in new]
        unified += [f" {x}" for x in after]
        result[at + shift:at + shift + 2] = new
        shift += 1
    codex.append("*** End Patch")
    expected = ("\n".join(result) + "\n").encode()
    return original, "\n".join(codex) + "\n", "\n".join(unified) + "\n", expected


@dataclass
class PatchTimes:
    """Medians and spreads of one apply_patch vs git apply series."""

    tool_ms: list[float]
    git_ms: list[float]
    start_ms: list[float]
    size: int
    patch_bytes: int
    diff_bytes: int


def time_patch(work: Path, name: str, reps: int, profile_into: list[str] | None) -> PatchTimes:
    """Interleaved apply_patch / git apply / ``git version`` runs, each patch on a fresh copy."""
    original, codex, unified, expected = make_patch_inputs(name)
    tool_dir, git_dir = work / f"tool-{name}", work / f"git-{name}"
    tool_dir.mkdir()
    git_dir.mkdir()
    diff_path = work / f"{name}.diff"
    diff_path.write_text(unified)
    git_env = {**os.environ, "GIT_CONFIG_NOSYSTEM": "1", "GIT_CONFIG_GLOBAL": os.devnull}
    registry = ToolRegistry(PATCH_TOOLS)

    def fresh_ctx() -> ToolContext:
        (tool_dir / name).write_bytes(original)
        return ToolContext(workspace=Workspace(tool_dir), documents=DiskDocumentStore(tool_dir))

    def run_tool(ctx: ToolContext) -> None:
        result = registry.execute("apply_patch", {"patch": codex}, ctx)
        if not result.ok:
            raise RuntimeError(f"apply_patch failed: {result.data.get('error')}")

    def run_git() -> None:
        subprocess.run(["git", "apply", str(diff_path)], cwd=git_dir, env=git_env, check=True,
                       stdin=subprocess.DEVNULL)

    def git_start() -> None:
        subprocess.run(["git", "version"], env=git_env, check=True, stdout=subprocess.DEVNULL,
                       stdin=subprocess.DEVNULL)

    times = PatchTimes([], [], [], len(original), len(codex), len(unified))
    for rep in range(reps + 1):  # the first round is a warm-up
        (git_dir / name).write_bytes(original)
        ms_git, _r = timed(run_git)
        if (git_dir / name).read_bytes() != expected:
            raise RuntimeError("git apply did not produce the expected file")
        ctx = fresh_ctx()
        ms_tool, _r = timed(lambda c=ctx: run_tool(c))
        if (tool_dir / name).read_bytes() != expected:
            raise RuntimeError("apply_patch did not produce the expected file (git apply's bytes)")
        ms_start, _r = timed(git_start)
        if rep:
            times.git_ms.append(ms_git)
            times.tool_ms.append(ms_tool)
            times.start_ms.append(ms_start)
    if profile_into is not None:
        ctx = fresh_ctx()
        profile_into.append(f"cProfile of apply_patch on {name}:\n" + hotspots(lambda: run_tool(ctx)))
    return times


def bench_patch(work: Path, reps: int, report_reps: int, profile: bool) -> tuple[list[Row], list[str]]:
    """Time the apply_patch tool against git apply on a 5 MB source file (and, for information, a report file)."""
    notes: list[str] = []
    main = time_patch(work, PATCH_FILE, reps, None)
    tool, git, start = median(main.tool_ms), median(main.git_ms), median(main.start_ms)
    rows = [
        Row(f"apply_patch {PATCH_FILE} ({PATCH_CHUNKS} chunks, {main.size / 1e6:.1f} MB)", tool,
            "git apply (subprocess)", git, PATCH_TARGET),
        Row("  same, vs git apply minus its process start", tool, f"git apply - `git version` ({start:.1f})",
            max(git - start, 0.001), None),
    ]
    notes.append(f"apply_patch: {main.size:,} bytes, {PATCH_LINES:,} lines, patch {main.patch_bytes:,} bytes, "
                 f"unified diff {main.diff_bytes:,} bytes; output bytes identical to git apply's (checked every "
                 f"repetition); tool {spread(main.tool_ms)} ms, git {spread(main.git_ms)} ms")
    if profile or rows[0].verdict == "NOT met":
        (work / "profile").mkdir()
        time_patch(work / "profile", PATCH_FILE, 0, notes)
    if report_reps > 0:
        extra: list[str] | None = notes if profile else None
        report = time_patch(work, REPORT_FILE, report_reps, extra)
        rows.append(Row(f"  apply_patch {REPORT_FILE} (report path: numbers scanned whole)",
                        median(report.tool_ms), "git apply (subprocess)", median(report.git_ms), None))
    return rows, notes


# --- main ----------------------------------------------------------------------------------------


def print_table(rows: list[Row]) -> None:
    name_w = max(len("measurement"), *(len(row.name) for row in rows))
    base_w = max(len("baseline"), *(len(row.base_name) for row in rows))
    head = (f"{'measurement':<{name_w}} {'K1412 ms':>9}   {'baseline':<{base_w}} {'ms':>8} {'ratio':>7}  "
            f"{'target':>6}  verdict")
    print(head)
    print("-" * len(head))
    for row in rows:
        target = f"<={row.target:g}x" if row.target is not None else "-"
        print(f"{row.name:<{name_w}} {row.tool_ms:>9.2f}   {row.base_name:<{base_w}} {row.base_ms:>8.2f} "
              f"{row.ratio:>6.2f}x  {target:>6}  {row.verdict}")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--reps", type=int, default=9, help="repetitions per timed side (median reported)")
    parser.add_argument("--fallback-reps", type=int, default=3, help="repetitions of the Python search fallback")
    parser.add_argument("--report-reps", type=int, default=3,
                        help="repetitions of the information row patching a report-path file (0 skips it)")
    parser.add_argument("--run-command-n", type=int, default=50, help="run_command / subprocess.run pairs")
    parser.add_argument("--profile", action="store_true", help="print cProfile hotspots even when targets are met")
    args = parser.parse_args()

    started = time.perf_counter()
    rg_version = subprocess.run(["rg", "--version"], capture_output=True, text=True, check=False).stdout.split("\n")[0]
    git_version = subprocess.run(["git", "version"], capture_output=True, text=True, check=False).stdout.strip()
    print(f"K1412 tool benchmarks: Python {platform.python_version()}, {os.cpu_count()} CPUs, {rg_version}, "
          f"{git_version}, {args.reps} repetitions (medians)")
    rows: list[Row] = []
    notes: list[str] = []
    with tempfile.TemporaryDirectory(prefix="k1412-bench-tools-") as tmp:
        tree = Path(tmp) / "tree"
        tree.mkdir()
        gen_ms, counts = timed(lambda: make_tree(tree))
        notes.append(f"tree: {counts['files']:,} files ({counts['files'] // 10:,} ignored by .gitignore), "
                     f"{counts['bytes'] / 1e6:.1f} MB, {counts['rare']} rare and {counts['common']:,} common "
                     f"matches outside ignored files; generated in {gen_ms / 1000:.1f} s")
        search_rows, search_notes = bench_search(tree, args.reps, args.fallback_reps, args.profile)
        rows += search_rows
        notes += search_notes
        patch_dir = Path(tmp) / "patch"
        patch_dir.mkdir()
        patch_rows, patch_notes = bench_patch(patch_dir, args.reps, args.report_reps, args.profile)
        rows += patch_rows
        notes += patch_notes
    figures = bench_run_command(args.run_command_n)
    rows.append(Row(f"run_command 'true', fresh sandbox (mean of {figures['n']}, {figures['sandbox']})",
                    figures["run_command_mean_ms"], "subprocess.run(['bash','-c','true'])",
                    figures["bare_mean_ms"], None))
    rows.append(Row(f"run_command 'true' after a model turn (median of {figures['n']})",
                    figures["after_turn_median_ms"], "subprocess.run(['bash','-c','true'])",
                    figures["after_turn_median_ms"] - figures["after_turn_overhead_median_ms"], None))
    print()
    print_table(rows)
    print()
    for note in notes:
        print(f"- {note}")
    print(f"- run_command: mean {figures['run_command_mean_ms']:.3f} ms (median {figures['run_command_median_ms']:.3f})"
          f" in a fresh sandbox vs bare mean {figures['bare_mean_ms']:.3f} ms; ratio {figures['ratio']:.2f}x")
    overhead = figures["after_turn_overhead_median_ms"]
    print(f"- run_command after a model turn (the sandbox started ahead, {figures['kept_sandbox_used']} of "
          f"{figures['calls']} took it): overhead {overhead:.3f} ms over bare (target <= 10 ms: "
          f"{'met' if overhead <= 10 else 'NOT met'})")
    print(f"- total benchmark time {time.perf_counter() - started:.1f} s")
    missed = [row.name.strip() for row in rows if row.verdict == "NOT met"]
    if overhead > 10:
        missed.append("run_command overhead after a model turn <= 10 ms")
    print("targets: " + ("all met" if not missed else "NOT met: " + "; ".join(missed)))
    return 0


if __name__ == "__main__":
    sys.exit(main())
