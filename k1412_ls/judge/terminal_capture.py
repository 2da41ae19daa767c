"""Terminal captures of mini-swe-agent (``sessions/agent.log``: tmux/asciinema text with ANSI codes).

The capture is what the terminal showed: escape sequences, spinner lines, log noise from libraries
and hard wrapping at the terminal width. After removing escape codes and spinners, lines as long as
the terminal's width are joined with the next one (a wrap the terminal made; lossy when a real line
was exactly that long), then each step is read as mini-swe-agent prints it:
``mini-swe-agent (step N, $cost):``, the thought, one ```bash block, ``User:``, then the tagged
observation (``observations``). The task is the first ``User:`` message (mini-swe-agent's default
instance template, ``Please solve this issue: TASK``, unwrapped), else the ``-t`` argument of the
``mini`` command line; the workspace root is the directory the shell prompt showed when ``mini`` started. A capture with no step is a run in which the agent never acted.
"""

from __future__ import annotations

import re
from pathlib import Path

from k1412_ls.judge.foreign import ForeignRun, Step, UnreadableRun
from k1412_ls.judge.observations import actions, is_submission, observation_step, thought

ANSI = re.compile(r"\x1b\[[0-9;?]*[ -/]*[@-~]|\x1b\][^\x07\x1b]*(?:\x07|\x1b\\)|\x1b[()][A-Z0-9]|\x1b[=>78]")
_SPINNER = re.compile(r"[⠋⠙⠹⠸⠼⠴⠦⠧⠇⠏] [^\n]*?\.\.\.")
_STEP = re.compile(r"^mini-swe-agent \(step (\d+)[^)]*\):", re.MULTILINE)
_RULE = re.compile(r"^─{40,}$", re.MULTILINE)
_LOG_LINE = re.compile(r"^\d\d:\d\d:\d\d - [\w.]+:(?:ERROR|WARNING|INFO|DEBUG)\b.*$", re.MULTILINE)
_TASK_HEAD = "Please solve this issue:"
_TASK_TAIL = "You can execute bash commands"
_PROMPT = re.compile(r"^[\w.-]+@[\w.-]+:(/[^#$\s]*)[#$] [^\n]*\bmini\b", re.MULTILINE)
_MINI_TASK = re.compile(r"\bmini\b[^\n]*?\s-t\s+'((?:[^']|'\"'\"')*)'", re.DOTALL)
DEFAULT_WIDTH = 160


def clean(raw: str) -> str:
    """The capture's text without escape codes, carriage returns and spinner lines, wraps joined."""
    text = ANSI.sub("", raw).replace("\r\n", "\n").replace("\r", "\n")
    text = _SPINNER.sub("", text)
    rules = [len(m.group(0)) for m in _RULE.finditer(text)]
    width = max(rules) if rules else DEFAULT_WIDTH
    lines = text.split("\n")
    joined: list[str] = []
    carry = ""
    for line in lines:
        wrapped = len(line) >= width - 1 and not _RULE.fullmatch(line)
        line = carry + line
        carry = ""
        if wrapped:
            carry = line
            continue
        joined.append(line)
    if carry:
        joined.append(carry)
    return "\n".join(joined)


def parse_terminal_capture(path: Path) -> ForeignRun:
    """Read one capture; UnreadableRun when it is not text a terminal showed."""
    try:
        raw = path.read_bytes().decode("utf-8", "replace")
    except OSError as exc:
        raise UnreadableRun(f"{path} could not be read ({exc.strerror}).") from None
    if "\x00" in raw[:4096]:
        raise UnreadableRun(f"{path} is binary, not a terminal capture.")
    text = clean(raw)
    markers = list(_STEP.finditer(text))
    steps: list[Step] = []
    final = ""
    problems: list[str] = []
    for index, marker in enumerate(markers):
        end = markers[index + 1].start() if index + 1 < len(markers) else len(text)
        chunk = text[marker.end():end]
        turn, _, reply = chunk.partition("\nUser:")
        blocks = actions(turn)
        words = thought(_LOG_LINE.sub("", turn))
        words = words.split("THOUGHT:", 1)[-1].strip() if "THOUGHT:" in words else words
        final = words or final
        if len(blocks) != 1:
            continue
        step = observation_step(blocks[0], reply)
        if step is None:
            if not is_submission(blocks[0]) and index + 1 < len(markers):
                problems.append(f"step {marker.group(1)} has no readable observation")
            continue
        steps.append(step)
    prompt = _PROMPT.search(text)
    root = prompt.group(1) if prompt else ""  # the shell prompt shows where the agent was started
    return ForeignRun(str(path), "terminal-bench", _task(text), steps, final, root, None,
                      "no step" if not markers else f"{len(markers)} steps", problems)


def _task(text: str) -> str:
    start = text.find(_TASK_HEAD)
    if start >= 0:
        end = text.find(_TASK_TAIL, start)
        body = text[start + len(_TASK_HEAD):end if end > 0 else start + 4000]
        return body.strip()
    match = _MINI_TASK.search(text)
    if match:
        body = match.group(1).replace("'\"'\"'", "'")
        return re.sub(r"\n> ?", "\n", body).strip()
    return ""

