"""Drive K1412's file tools from a separate process, to race another process on the same file.

Run as ``python -m tests.support.write_race WORKSPACE FILE PREFIX COUNT OUT [--fresh] [--ready R --go G]``:
it patches the lines ``PREFIX-NNNN todo`` of FILE to ``PREFIX-NNNN done`` one call at a
time (``patch_file``, like a run does) and writes, as JSON to OUT, what each call returned. With
``--fresh`` the run's record of what it read is dropped before each call, so only the write path
itself can keep the edits of two processes apart (no earlier read makes the call stale). ``--ready``
creates R once the tools are loaded and ``--go`` then waits for G to exist, so two drivers start
their first call together.

:func:`make_file` and :func:`lost_edits` build the shared file and judge the outcome.
"""

from __future__ import annotations

import argparse
import json
import time
from pathlib import Path
from typing import Any

FILLER = "x" * 100


def line(prefix: str, index: int, state: str = "todo") -> str:
    return f"{prefix}-{index:04d} {state}"


def make_file(path: Path, prefixes: tuple[str, ...], count: int, size: int = 1_500_000) -> None:
    """A ~``size``-byte text file holding one ``PREFIX-NNNN todo`` line per prefix and index, among filler."""
    lines = [line(prefix, index) for index in range(count) for prefix in prefixes]
    filler_lines = max(1, size // (len(FILLER) + 1) - len(lines))
    per_gap = max(1, filler_lines // len(lines))
    body: list[str] = []
    for item in lines:
        body.append(item)
        body.extend([FILLER] * per_gap)
    path.write_text("\n".join(body) + "\n", encoding="utf-8")


def lost_edits(path: Path, prefix: str, results: list[dict[str, Any]]) -> list[int]:
    """Indexes of edits the tool reported ``ok`` that are not in the file."""
    final = set(path.read_text(encoding="utf-8").split("\n"))
    return [r["index"] for r in results if r["ok"] and line(prefix, r["index"], "done") not in final]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m tests.support.write_race")
    parser.add_argument("workspace")
    parser.add_argument("file")
    parser.add_argument("prefix")
    parser.add_argument("count", type=int)
    parser.add_argument("out")
    parser.add_argument("--fresh", action="store_true")
    parser.add_argument("--ready")
    parser.add_argument("--go")
    args = parser.parse_args(argv)

    from k1412_ls.catalog import default_registry
    from k1412_ls.tools.files.documents import DiskDocumentStore
    from k1412_ls.tools.files.locks import user_write_lock
    from k1412_ls.tools.files.workspace import Workspace
    from k1412_ls.tools.registry import ToolContext

    registry = default_registry()
    ctx = ToolContext(workspace=Workspace(args.workspace), documents=DiskDocumentStore(args.workspace),
                      user="default", run_id=args.prefix, write_lock=user_write_lock("default"))
    if args.ready:
        Path(args.ready).touch()
    if args.go:
        deadline = time.monotonic() + 30
        while not Path(args.go).exists() and time.monotonic() < deadline:
            time.sleep(0.001)
    results: list[dict[str, Any]] = []
    for index in range(args.count):
        if args.fresh:
            ctx.reads.clear()
        edit = {"old_text": line(args.prefix, index) + "\n", "new_text": line(args.prefix, index, "done") + "\n"}
        result = registry.execute("patch_file", {"path": args.file, "edits": [edit]}, ctx)
        results.append({"index": index, "ok": result.ok, "error": result.data.get("error")})
    Path(args.out).write_text(json.dumps(results), encoding="utf-8")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
