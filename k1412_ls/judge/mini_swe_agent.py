"""mini-swe-agent trajectories (``*.traj.json``, ``trajectory_format`` "mini-swe-agent-1").

``{"info": {exit_status, submission, config: {environment: {cwd}}}, "messages": [...]}``: the first user
message is the task, each assistant message holds one bash action and the next user message its
observation (``observations``). The submission is the final diff; the final answer is the free text
of the last assistant turn.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from k1412_ls.judge.foreign import ForeignRun, Step, UnreadableRun
from k1412_ls.judge.observations import (
    actions,
    diff_files,
    is_submission,
    observation_step,
    template_task,
    thought,
)


def _text(message: Any) -> str:
    content = message.get("content") if isinstance(message, dict) else None
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return "\n".join(str(part.get("text", "")) for part in content if isinstance(part, dict))
    return ""


def looks_like(data: Any) -> bool:
    return isinstance(data, dict) and isinstance(data.get("messages"), list) and (
        str(data.get("trajectory_format", "")).startswith("mini-swe-agent") or "info" in data)


def parse_mini_swe_agent(path: Path, data: Any | None = None) -> ForeignRun:
    """Read one trajectory file; UnreadableRun when it is not one."""
    if data is None:
        try:
            data = json.loads(path.read_text(encoding="utf-8"))
        except (OSError, UnicodeDecodeError, ValueError) as exc:
            raise UnreadableRun(f"{path} is not a JSON trajectory ({type(exc).__name__}).") from None
    if not looks_like(data):
        raise UnreadableRun(f"{path} is not a mini-swe-agent trajectory (no 'messages' list).")
    messages = [m for m in data["messages"] if isinstance(m, dict)]
    info = data.get("info") if isinstance(data.get("info"), dict) else {}
    users = [m for m in messages if m.get("role") == "user"]
    task = _text(users[0]) if users else ""
    config = info.get("config") if isinstance(info.get("config"), dict) else {}
    agent = config.get("agent") if isinstance(config.get("agent"), dict) else {}
    template = agent.get("instance_template")
    if isinstance(template, str):
        task = template_task(task, template) or task
    steps: list[Step] = []
    final = ""
    problems: list[str] = []
    for index, message in enumerate(messages):
        if message.get("role") != "assistant":
            continue
        text = _text(message)
        blocks = actions(text)
        final = thought(text) or final
        if len(blocks) != 1:
            continue  # the harness refuses a turn without exactly one action: nothing ran
        reply = next((_text(m) for m in messages[index + 1:] if m.get("role") in ("user", "tool")), None)
        if reply is None:
            if not is_submission(blocks[0]):
                problems.append("the last action has no observation")
            continue
        step = observation_step(blocks[0], reply)
        if step is not None:
            steps.append(step)
    environment = config.get("environment") if isinstance(config.get("environment"), dict) else {}
    root = environment.get("cwd") if isinstance(environment.get("cwd"), str) else ""
    submission = info.get("submission")
    submitted = diff_files(submission) if isinstance(submission, str) else None
    ended = str(info.get("exit_status") or "")
    return ForeignRun(str(path), "mini-swe-agent", task, steps, final, root, submitted, ended, problems)
