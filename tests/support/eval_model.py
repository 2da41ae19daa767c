"""A scripted model for evaluation suites: many concurrent runs, each answered by its own task and arm.

Every task reads "Create the file tNN.txt containing the word WORD." The
server picks a behaviour from the request's provider model (the arm) and the
task number, and the step from how many assistant turns the request already
holds, so runs in parallel processes (or on Ray) get deterministic replies:

* ``good``: write the file, read it back, say so → completed, check passes;
* ``wrong``: write another word, read it back, say so → completed, check fails;
* ``unproven``: write the file, then only claim it → unverified, check passes;
* ``idle``: only claim → unverified, check fails.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

from tests.support.scripted_server import ScriptedServer

TASK = "Create the file t{n:02d}.txt containing the word apple-{n}."
CHECK = "grep -qx 'apple-{n}' t{n:02d}.txt"
_TASK = re.compile(r"file (t(\d+)\.txt) containing the word (\S+)\.")
# Every call reports the same usage, 600 of its 1,000 prompt tokens served from the cache.
USAGE = {"prompt_tokens": 1000, "completion_tokens": 100, "reasoning_tokens": 20, "cached_tokens": 600}

# What each arm's model does with task n (the provider_model names the arm's behaviour table).
BEHAVIOURS: dict[str, list[str]] = {
    "careful": ["good"] * 7 + ["wrong", "unproven", "idle"],
    "hasty": ["good"] * 4 + ["wrong", "wrong", "unproven", "unproven", "idle", "idle"],
}


def behaviour(provider_model: str, number: int) -> str:
    table = BEHAVIOURS[provider_model]
    return table[number % len(table)]


def _steps(kind: str, path: str, word: str) -> list[dict[str, Any]]:
    write = {"tool_calls": [{"name": "write_file", "arguments": {"path": path, "content": word + "\n"}}]}
    wrong = {"tool_calls": [{"name": "write_file", "arguments": {"path": path, "content": "pear\n"}}]}
    read = {"tool_calls": [{"name": "read_file", "arguments": {"path": path}}]}
    claim = {"content": f"I created {path} containing {word} and read it back to check."}
    if kind == "good":
        return [write, read, claim]
    if kind == "wrong":
        return [wrong, read, claim]
    if kind == "unproven":
        return [write, {"content": f"Created {path}."}]
    return [{"content": f"Done, {path} is created."}]


class EvalModelServer(ScriptedServer):
    """Answers each chat request from its task, arm and step; never runs out of script."""

    def __init__(self) -> None:
        super().__init__([])

    def step_for(self, body: dict[str, Any]) -> dict[str, Any] | None:
        messages = body.get("messages") or []
        task = next((m.get("content") for m in messages if m.get("role") == "user"
                     and isinstance(m.get("content"), str) and _TASK.search(m["content"])), "")
        found = _TASK.search(task or "")
        if not found:
            return {"content": "I do not know this task."}
        steps = _steps(behaviour(str(body.get("model")), int(found.group(2))), found.group(1), found.group(3))
        turn = sum(1 for m in messages if m.get("role") == "assistant")
        return {**steps[min(turn, len(steps) - 1)], "usage": USAGE}


def write_suite(root: Path, base_url: str, tasks: int = 10, experiment: str = "suite-test",
                pricing: str = "{ input = 2.0, cached_input = 0.5, output = 8.0 }") -> Path:
    """A suite of ``tasks`` tasks and two arms (careful, hasty), with its configuration beside it."""
    (root / "fixture").mkdir(parents=True, exist_ok=True)
    (root / "fixture" / "README.md").write_text("A fixture copied into every run's workspace.\n")
    (root / "k1412.toml").write_text(
        'default_model = "careful"\n'
        f'[providers.test]\nbase_url = "{base_url}"\ntimeout_s = 20\nmax_retries = 0\n'
        + "".join(f'[models.{name}]\nprovider = "test"\nprovider_model = "{name}"\nmax_iterations = 8\n'
                  f"pricing = {pricing}\n" for name in BEHAVIOURS),
        encoding="utf-8")
    lines = [f'experiment = "{experiment}"', 'config = "k1412.toml"', ""]
    for n in range(tasks):
        lines += ["[[task]]", f'id = "t{n:02d}"', f'task = "{TASK.format(n=n)}"', 'workspace = "fixture"',
                  f'check = "{CHECK.format(n=n)}"', ""]
    for name in BEHAVIOURS:
        lines += ["[[arm]]", f'name = "{name}"', f'model = "{name}"', ""]
    suite = root / "suite.toml"
    suite.write_text("\n".join(lines), encoding="utf-8")
    return suite


def expected_counts(tasks: int, repeat: int) -> dict[str, dict[str, int]]:
    """Per arm: runs, completed, unverified, check_passed, as the behaviour tables make them."""
    counts: dict[str, dict[str, int]] = {}
    for arm in BEHAVIOURS:
        kinds = [behaviour(arm, n) for n in range(tasks)] * repeat
        counts[arm] = {"runs": len(kinds), "completed": sum(k in ("good", "wrong") for k in kinds),
                       "unverified": sum(k in ("unproven", "idle") for k in kinds),
                       "check_passed": sum(k in ("good", "unproven") for k in kinds),
                       "true_positives": sum(k == "good" for k in kinds)}
    return counts


__all__ = ["BEHAVIOURS", "CHECK", "TASK", "USAGE", "EvalModelServer", "behaviour", "expected_counts", "write_suite"]
