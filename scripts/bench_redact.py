"""Cost of redaction per MB (and per small event string), before vs after, side by side.

Usage: ``python scripts/bench_redact.py [--baseline REV] [--secrets N] [--repeat R]``.

"Before" is ``k1412_ls/text/redact.py`` as it was at ``REV`` (default: the
last commit before encoded forms were redacted), loaded from git into its own
module; "after" is the working tree's. Both get the same known values: two
provider keys plus ``N - 2`` secret environment values. Each corpus is about
1 MB and holds no secret, which is the common case (every tool output and
event goes through ``Redactor.text``); one corpus has a few secrets in it.
"""

from __future__ import annotations

import argparse
import base64
import json
import random
import subprocess
import sys
import time
import types
from collections.abc import Callable
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from k1412_ls.text import redact as after  # noqa: E402

BASELINE = "f604e9c"
MB = 1024 * 1024


def load_baseline(rev: str) -> types.ModuleType:
    source = subprocess.run(["git", "show", f"{rev}:k1412_ls/text/redact.py"], cwd=ROOT, check=True,
                            capture_output=True, text=True).stdout
    module = types.ModuleType("redact_before")
    exec(compile(source, f"{rev}:redact.py", "exec"), module.__dict__)  # our own file at REV
    return module


def secrets(count: int, rng: random.Random) -> list[str]:
    alphabet = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_-"
    keys = ["sk-proj-" + "".join(rng.choice(alphabet) for _ in range(156)),
            "".join(rng.choice(alphabet) for _ in range(40))]
    keys += ["".join(rng.choice(alphabet) for _ in range(rng.randrange(12, 48))) for _ in range(count - 2)]
    return keys


def corpora(rng: random.Random, keys: list[str]) -> dict[str, str]:
    code = (ROOT / "k1412_ls" / "core" / "runtime.py").read_text(encoding="utf-8")
    log_line = "2024-05-01T12:00:{s:02d}Z INFO worker[{p}] GET /api/v1/items?page={n} 200 {ms}ms user=alice\n"
    log = "".join(log_line.format(s=i % 60, p=i % 7, n=i, ms=i % 500) for i in range(14000))
    blob = base64.encodebytes(rng.randbytes(MB * 3 // 4)).decode("ascii")
    events = json.dumps([{"type": "tool.completed", "payload": {"output": f"line {i}\n" * 5, "path": f"src/m{i}.py",
                                                               "sha": f"{rng.getrandbits(160):040x}"}}
                         for i in range(6000)])
    leaky = code + "".join(f"\nkey={k}\n{base64.b64encode(k.encode()).decode()}\n{k[::-1]}\n" for k in keys[:2])
    return {
        "source code": (code * (MB // len(code) + 1))[:MB],
        "server log": (log * (MB // len(log) + 1))[:MB],
        "base64 blob (76 cols)": blob[:MB],
        "event JSON": (events * (MB // len(events) + 1))[:MB],
        "code with 2 keys x3 forms": (leaky * (MB // len(leaky) + 1))[:MB],
    }


def best_ms(fn: Callable[[], object], repeat: int) -> float:
    samples = []
    for _ in range(repeat):
        started = time.perf_counter()
        fn()
        samples.append(time.perf_counter() - started)
    return min(samples) * 1000


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--baseline", default=BASELINE)
    parser.add_argument("--secrets", type=int, default=10)
    parser.add_argument("--repeat", type=int, default=5)
    args = parser.parse_args()
    rng = random.Random(1412)
    keys = secrets(max(args.secrets, 2), rng)
    before = load_baseline(args.baseline).Redactor(keys)
    now = after.Redactor(keys)
    print(f"known values: {len(keys)} (searched forms after: {len(now._forms)}); best of {args.repeat}")
    print(f"{'corpus (1 MB)':28} {'before ms/MB':>13} {'after ms/MB':>12} {'ratio':>7}")
    for name, text in corpora(rng, keys).items():
        old = best_ms(lambda t=text: before.text(t), args.repeat)
        new = best_ms(lambda t=text: now.text(t), args.repeat)
        print(f"{name:28} {old:13.1f} {new:12.1f} {new / old:7.2f}")
    payload = {"tool": "run_command", "args": {"command": "pytest -q tests/test_x.py", "cwd": "."},
               "facts": {"kind": "exec", "exit_code": 0, "output": "3 passed in 0.12s\n", "paths": ["a.py", "b.py"]}}
    n = 2000
    old_us = best_ms(lambda: [before.value(payload) for _ in range(n)], args.repeat) * 1000 / n
    new_us = best_ms(lambda: [now.value(payload) for _ in range(n)], args.repeat) * 1000 / n
    print(f"{'one event payload (8 str)':28} {old_us:11.1f}us {new_us:10.1f}us {new_us / old_us:7.2f}")


if __name__ == "__main__":
    main()
