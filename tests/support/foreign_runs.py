"""Small hand-written runs of other agents, one per format ``k1412 judge`` reads."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

TEMPLATE = "<pr_description>\n{{task}}\n</pr_description>\n\n<instructions>\nSubmit with echo SUBMIT.\n</instructions>"
TASK = "Fix the bug in calc.py: add(2, 2) returns 5."
SUBMIT = "echo COMPLETE_TASK_AND_SUBMIT_FINAL_OUTPUT && git add -A && git diff --cached"
DIFF = "diff --git a/calc.py b/calc.py\n--- a/calc.py\n+++ b/calc.py\n@@ -1 +1 @@\n-x\n+y\n"


def observation(code: int, output: str) -> str:
    return f"<returncode>{code}</returncode>\n<output>\n{output}</output>"


def mini_traj(actions: list[tuple[str, str]], *, submission: str = DIFF, final: str = "Fixed add.") -> dict[str, Any]:
    """A mini-swe-agent trajectory: each (command, observation) pair is one step, then the submit step."""
    messages: list[dict[str, Any]] = [
        {"role": "system", "content": "You run bash."},
        {"role": "user", "content": TEMPLATE.replace("{{task}}", TASK)},
    ]
    for command, reply in actions:
        messages.append({"role": "assistant", "content": f"THOUGHT: next.\n\n```bash\n{command}\n```"})
        messages.append({"role": "user", "content": reply})
    messages.append({"role": "assistant", "content": f"THOUGHT: {final}\n\n```bash\n{SUBMIT}\n```"})
    messages.append({"role": "user", "content": submission})
    return {"trajectory_format": "mini-swe-agent-1", "messages": messages,
            "info": {"exit_status": "Submitted", "submission": submission,
                     "config": {"agent": {"instance_template": TEMPLATE}, "environment": {"cwd": "/repo"}}}}


FIX = "cd /repo && sed -i 's/return a + b + 1/return a + b/' calc.py"
PASSING_TESTS = "cd /repo && python -m pytest -q tests/test_calc.py"
GOOD_ACTIONS = [
    ("cat calc.py", observation(0, "def add(a, b):\n    return a + b + 1\n")),
    (FIX, observation(0, "")),
    (PASSING_TESTS, observation(0, "...\n3 passed in 0.02s\n")),
]


def write_mini(path: Path, actions: list[tuple[str, str]], **kw: Any) -> Path:
    path.write_text(json.dumps(mini_traj(actions, **kw)), encoding="utf-8")
    return path


ESC = "\x1b"


def terminal_capture(width: int = 80) -> str:
    """A capture of ``mini`` in a terminal ``width`` columns wide: colours, spinners, one wrapped command."""
    rule = "─" * width
    long_command = "python3 -c \"print('" + "x" * (width + 10) + "')\""
    head, tail = long_command[:width], long_command[width:]
    return "\n".join([
        f"root@box:/app# {ESC}[1mmini{ESC}[0m -m some-model -t 'Create hello.txt containing hi' -y",
        "User:",
        "Please solve this issue: Create hello.txt containing hi",
        "",
        "You can execute bash commands and edit files to implement the necessary changes.",
        rule,
        f"{ESC}[32m⠋ Waiting for the LM to respond...{ESC}[0m",
        "mini-swe-agent (step 1, $0.00):",
        "THOUGHT: write it.",
        "",
        "```bash",
        "echo hi > hello.txt",
        "```",
        "",
        "User:",
        "<returncode>0</returncode>",
        "<output>",
        "</output>",
        rule,
        "mini-swe-agent (step 2, $0.01):",
        "THOUGHT: check it.",
        "```bash",
        "cat hello.txt",
        "```",
        "User:",
        "<returncode>0</returncode>",
        "<output>",
        "hi",
        "</output>",
        rule,
        "mini-swe-agent (step 3, $0.01):",
        "THOUGHT: a long one.",
        "```bash",
        head,
        tail,
        "```",
        "User:",
        "<returncode>0</returncode>",
        "<output>",
        "x" * 10,
        "</output>",
        rule,
        "mini-swe-agent (step 4, $0.02):",
        "THOUGHT: hello.txt holds hi. Done.",
        "```bash",
        "echo COMPLETE_TASK_AND_SUBMIT_FINAL_OUTPUT",
        "```",
        "root@box:/app# exit",
    ]) + "\n"


def claude_stream(calls: list[tuple[str, dict[str, Any], str, bool]], final: str) -> str:
    """Claude Code stream-json: each (tool, input, result, is_error) is one tool call and its result."""
    lines = [json.dumps({"type": "system", "subtype": "init", "cwd": "/work"})]
    for index, (name, args, result, is_error) in enumerate(calls):
        call_id = f"toolu_{index}"
        lines.append(json.dumps({"type": "assistant", "parent_tool_use_id": None, "message": {
            "role": "assistant", "content": [{"type": "tool_use", "id": call_id, "name": name, "input": args}]}}))
        lines.append("some text the program printed on stderr")
        lines.append(json.dumps({"type": "user", "parent_tool_use_id": None, "message": {"role": "user", "content": [
            {"type": "tool_result", "tool_use_id": call_id, "content": result, "is_error": is_error}]}}))
    lines.append(json.dumps({"type": "result", "subtype": "success", "result": final}))
    return "\n".join(lines) + "\n"
