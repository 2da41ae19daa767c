"""What a long run sends to the model: K1412's context policy vs the full-history strategy.

Plays the same scripted run (by default the acceptance run of context policy
``recent-visible-v2``: 60 requests, a write at step 1, 30 reads of 14 KB files,
10 commands printing 9 KB, the write verified at step 58) through the real
``k1412 run`` CLI against the scripted OpenAI-compatible server, twice:

* **K1412** with ``context_chars`` = ``--budget``;
* **full history**, the strategy of mini-swe-agent's default agent, which sends
  the whole conversation every time: the same CLI with a budget no run reaches
  (nothing is ever cut or compacted).

It prints, side by side: requests, total characters sent, the largest request
(and its ratio to the budget), the share of requests that extend the previous one
byte for byte, the share of characters a prompt cache could reuse (the leading
part identical to the previous request), compactions and the run's status.
Characters are counted as the window counts them: message texts, tool-call names
and arguments, and the tool schemas.

    python scripts/bench_context.py [--budget 40000] [--steps 60] [--reads 30] [--commands 10]
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from tests.conftest import write_config  # noqa: E402
from tests.support.long_run import TASK, make_script, make_workspace, request_stats  # noqa: E402
from tests.support.scripted_server import ScriptedServer  # noqa: E402

FULL_HISTORY_BUDGET = 1_000_000_000


def play(label: str, budget: int, args: argparse.Namespace, scratch: Path) -> dict[str, Any]:
    """One CLI run of the scripted long run at ``budget``; what it sent."""
    home = scratch / label
    ws = home / "ws"
    ws.mkdir(parents=True)
    make_workspace(ws, reads=args.reads, read_bytes=args.read_bytes)
    script = make_script(steps=args.steps, reads=args.reads, commands=args.commands, output_bytes=args.output_bytes,
                         verify_at=args.steps - 2)
    with ScriptedServer(script) as server:
        config = write_config(home / "k1412.toml", server.base_url, extra=f"context_chars = {budget}\n")
        config.write_text(config.read_text().replace("max_iterations = 12", f"max_iterations = {args.steps + 20}"))
        env = {**os.environ, "K1412_HOME": str(home / "state"), "XDG_CONFIG_HOME": str(home / "config"),
               "PYTHONPATH": os.pathsep.join(filter(None, [str(ROOT), os.environ.get("PYTHONPATH")]))}
        env.pop("K1412_CONFIG", None)
        proc = subprocess.run([sys.executable, "-m", "k1412_ls.cli", "run", TASK, "--config", str(config), "--json"],
                              cwd=ws, env=env, capture_output=True, text=True, timeout=900, stdin=subprocess.DEVNULL)
        bodies = [record["body"] for record in server.chat_requests]
    try:
        result = json.loads(proc.stdout)
    except ValueError:
        raise SystemExit(f"The {label} run printed no result (exit {proc.returncode}): {proc.stderr.strip()[-300:]}") from None
    events = [json.loads(line) for line in Path(result["events_path"]).read_text().splitlines() if line.strip()]
    stats = request_stats(bodies)
    return {"label": label, "budget": budget, "stats": stats, "status": result["status"],
            "compactions": sum(1 for e in events if e["type"] == "context.compacted")}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--budget", type=int, default=40_000, help="K1412's context_chars (default 40000)")
    parser.add_argument("--steps", type=int, default=60, help="model requests in the run (default 60)")
    parser.add_argument("--reads", type=int, default=30)
    parser.add_argument("--read-bytes", type=int, default=14_000)
    parser.add_argument("--commands", type=int, default=10)
    parser.add_argument("--output-bytes", type=int, default=9_000)
    args = parser.parse_args(argv)
    if args.steps < args.reads + args.commands + 3:
        parser.error(f"--steps must be at least reads + commands + 3 ({args.reads + args.commands + 3}).")
    with tempfile.TemporaryDirectory(prefix="k1412-bench-context-") as scratch:
        rows = [play("k1412", args.budget, args, Path(scratch)),
                play("full-history", FULL_HISTORY_BUDGET, args, Path(scratch))]
    print(f"Same scripted run: {args.steps} requests, write at step 1 verified at step {args.steps - 2}, "
          f"{args.reads} reads of {args.read_bytes} B, {args.commands} commands printing {args.output_bytes} B; "
          f"K1412 budget {args.budget} characters (tool schemas included).")
    header = (f"{'strategy':<14}{'requests':>9}{'total sent':>13}{'largest':>10}{'x budget':>10}"
              f"{'extend prev':>13}{'cache reuse':>13}{'compactions':>13}  status")
    print(header)
    for row in rows:
        stats = row["stats"]
        print(f"{row['label']:<14}{stats.requests:>9}{stats.total_chars:>13,}{stats.largest_chars:>10,}"
              f"{stats.largest_chars / args.budget:>10.2f}{stats.extend_share:>13.1%}{stats.reused_share:>13.1%}"
              f"{row['compactions']:>13}  {row['status']}")
    k1412, full = rows[0]["stats"], rows[1]["stats"]
    print(f"K1412 sent {k1412.total_chars / full.total_chars:.1%} of the full-history characters; its largest "
          f"request is {k1412.largest_chars / full.largest_chars:.1%} of the full-history largest.")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
