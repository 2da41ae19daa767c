"""A scripted trajectory: a workspace, a request, the model's turns, and the verdict a user deserves.

Trajectories are data. They say nothing about how the gate decides; they say
what really happened (``expect``): ``completed`` when the turns really do
the work the request asks for and the final answer tells the truth,
``unverified`` when the run is lazy or deceptive. ``run_trajectory`` plays
one through the real runtime (real tools, real commands, a scripted model
whose final answer repeats if the gate rejects it) and returns the result.
"""

from __future__ import annotations

import asyncio
import subprocess
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from k1412_ls.catalog import default_registry
from k1412_ls.config import build_config
from k1412_ls.core.run_outcomes import RunResult
from k1412_ls.core.run_request import RunRequest
from k1412_ls.core.runtime import Runtime
from k1412_ls.state.store import StateStore
from tests.support.scripted_model import ScriptedChatModel

CLASSES = ("masked", "weak-test", "narrower", "literal", "unrecognised", "file-rule", "inspection", "figures",
           "honest", "honest-refusal", "wrong-copy", "stale-check", "wrong-dir", "overclaim",
           "stale-artifact", "phantom-figure", "compile-not-run", "honest-proof", "honest-polyglot", "honest-long",
           "undone", "other-copy", "vacuous", "partial", "invented", "honest-revert", "honest-copy",
           "honest-runner", "honest-multi", "honest-answer", "honest-readback", "honest-partial")


@dataclass(frozen=True)
class Trajectory:
    """One scripted run and the verdict it deserves."""

    id: str
    klass: str           # one of CLASSES
    lang: str            # "en" or "zh" (the language of the request)
    expect: str          # "completed" or "unverified"
    task: str
    turns: tuple[dict[str, Any], ...]   # {"tool_calls": [...]} steps, then {"content": "final answer"}
    files: dict[str, str] = field(default_factory=dict)
    git: bool = False    # git init + commit the files before the run
    note: str = ""

    def __post_init__(self) -> None:
        if self.klass not in CLASSES:
            raise ValueError(f"{self.id}: unknown class {self.klass}")
        if self.expect not in ("completed", "unverified") or self.lang not in ("en", "zh"):
            raise ValueError(f"{self.id}: bad expect/lang")
        if not self.turns or "content" not in self.turns[-1] or self.turns[-1].get("tool_calls"):
            raise ValueError(f"{self.id}: the last turn must be a final answer")


def call(name: str, **arguments: Any) -> dict[str, Any]:
    """One tool call."""
    return {"name": name, "arguments": arguments}


def sh(command: str, **extra: Any) -> dict[str, Any]:
    """A turn that runs one shell command."""
    return {"tool_calls": [call("run_command", command=command, **extra)]}


def tools(*calls: dict[str, Any]) -> dict[str, Any]:
    """A turn with one or more tool calls."""
    return {"tool_calls": list(calls)}


def write(path: str, content: str) -> dict[str, Any]:
    return tools(call("write_file", path=path, content=content))


def read(path: str) -> dict[str, Any]:
    return tools(call("read_file", path=path))


def answer(text: str) -> dict[str, Any]:
    return {"content": text}


def prepare_workspace(ws: Path, trajectory: Trajectory) -> None:
    """Lay out the trajectory's files (and a git repository when it asks for one)."""
    for rel, text in trajectory.files.items():
        target = ws / rel
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(text, encoding="utf-8")
    if trajectory.git:
        env_args = ["-c", "user.name=Test", "-c", "user.email=test@example.invalid"]
        subprocess.run(["git", "init", "-q"], cwd=ws, check=True)
        subprocess.run(["git", *env_args, "add", "-A"], cwd=ws, check=True)
        subprocess.run(["git", *env_args, "commit", "-q", "-m", "initial", "--allow-empty"], cwd=ws, check=True)


def run_trajectory(trajectory: Trajectory, root: Path) -> RunResult:
    """Play ``trajectory`` in a fresh workspace under ``root`` and return the run's result."""
    ws = root / "ws"
    ws.mkdir(parents=True)
    prepare_workspace(ws, trajectory)
    steps = [dict(step) for step in trajectory.turns]
    steps[-1]["repeat"] = True  # a rejected final answer is given again, as a stubborn model would
    model = ScriptedChatModel(steps)
    # The gate is judged on what commands did; the user of these trajectories lets commands commit.
    config = build_config({"sandbox": {"git_writable": True}})
    state = StateStore(root / "state" / "k1412.sqlite3")
    runtime = Runtime(config, lambda _c, _s: model, root / "state", default_registry(), state)
    try:
        return asyncio.run(runtime.run(RunRequest(task=trajectory.task, workspace=ws)))
    finally:
        state.close()
