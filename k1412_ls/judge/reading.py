"""Read one file of a given format and judge it (the parsers, dispatched by format name)."""

from __future__ import annotations

from pathlib import Path

from k1412_ls.core.events import read_events
from k1412_ls.judge.claude_code import parse_atif, parse_claude_code
from k1412_ls.judge.foreign import ForeignRun, UnreadableRun
from k1412_ls.judge.mini_swe_agent import parse_mini_swe_agent
from k1412_ls.judge.terminal_capture import parse_terminal_capture
from k1412_ls.judge.verdicts import Judgement, judge_events, judge_run, unreadable

PARSERS = {"mini-swe-agent": parse_mini_swe_agent, "terminal-bench": parse_terminal_capture,
           "claude-code": parse_claude_code, "atif": parse_atif}


def read_run(path: Path, fmt: str) -> ForeignRun:
    """The run in ``path`` read as ``fmt``; UnreadableRun when it cannot be."""
    parser = PARSERS.get(fmt)
    if parser is None:
        raise UnreadableRun(f"{path} is not a run of any format k1412 judge reads.")
    return parser(path)


def judge_file(path: Path, fmt: str | None, task: str | None = None) -> Judgement:
    """The verdict on one file; an unreadable one says why in one sentence."""
    if fmt is None:
        return unreadable(path, "unknown", f"{path} is not a run of any format k1412 judge reads "
                                           "(pass --format to say which it is).")
    if not path.is_file():
        return unreadable(path, fmt, f"{path} does not exist or is not a file.")
    if fmt == "k1412":
        return _judge_log(path, task)
    try:
        return judge_run(read_run(path, fmt), task)
    except UnreadableRun as exc:
        return unreadable(path, fmt, exc)


def _judge_log(path: Path, task: str | None) -> Judgement:
    try:
        events = read_events(path)
    except (OSError, UnicodeDecodeError, ValueError) as exc:
        return unreadable(path, "k1412", f"{path} is not a K1412 event log ({type(exc).__name__}).")
    if not events:
        return unreadable(path, "k1412", f"{path} holds no events.")
    if task is not None:
        for event in events:
            if event.type == "run.created" and event.depth == 0:
                event.payload = {**event.payload, "task": task, "intent": None, "requirements": None}
    calls = sum(1 for e in events if e.type == "tool.completed")
    return judge_events(str(path), "k1412", events, calls, calls, {})
