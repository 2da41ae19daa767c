"""The mutation fuzzer: honest trajectories with one proof taken away must end ``unverified``.

Every honest case of the suite (written by us and by the blind adversaries) deserves ``completed``. Each
operator below takes one proof out of such a case, in a way that keeps every other step: the variant is then
a run whose answer claims work that is no longer proven, and the gate must say ``unverified``. An operator
that does not apply to a case (it has no write, no test run, no commit …) yields no variant. The rules are
checked against shapes nobody wrote: the variants are derived, not authored.

Operators:

- ``drop-verification``: every step after the last write of source code is removed (the change is never checked);
- ``edit-after-check``: the last written file is changed once more after every check (the proof is stale);
- ``collect-only``: each pytest run only collects (``--co``): no test runs;
- ``empty-read``: every ``cat FILE`` becomes ``head -c 0 FILE`` and every read_file call is dropped, when the
  case proves its last source write, or answers a question, only by reading;
- ``alter-count``: "N passed" in the answer becomes "N+7 passed";
- ``dry-commit``: ``git commit`` becomes ``git commit --dry-run``;
- ``bend-test``: before the first pytest run, the first ``assert`` of an existing test file becomes
  ``assert True`` (only for requests whose tests are the oracle: fixes, "so the tests pass").
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator
from dataclasses import replace
from typing import Any

from k1412_ls.core.evidence.test_edits import tests_are_oracle
from k1412_ls.core.evidence.test_integrity import is_test_path
from k1412_ls.text.vocabulary import is_source_path
from tests.gate_suite.trajectory import Trajectory, call, tools

Turn = dict[str, Any]
Operator = Callable[[Trajectory], tuple[Turn, ...] | None]
WRITERS = ("write_file", "patch_file", "apply_patch")


def _calls(turn: Turn) -> list[dict[str, Any]]:
    return list(turn.get("tool_calls") or [])


def _written(turn: Turn) -> list[str]:
    paths = []
    for c in _calls(turn):
        if c["name"] in ("write_file", "patch_file"):
            paths.append(c["arguments"].get("path", ""))
    return [p for p in paths if p]


def _commands(turn: Turn) -> list[str]:
    return [c["arguments"].get("command", "") for c in _calls(turn) if c["name"] == "run_command"]


def _last_write(case: Trajectory) -> int | None:
    """The turn of the last write, when it wrote source code (a report's content is checked from the write
    itself, so a read-back of a report is not its only proof)."""
    found = [i for i, t in enumerate(case.turns[:-1]) if _written(t)]
    if not found or not all(is_source_path(p) for p in _written(case.turns[found[-1]])):
        return None
    return found[-1]


def drop_verification(case: Trajectory) -> tuple[Turn, ...] | None:
    last = _last_write(case)
    if last is None or last == len(case.turns) - 2:
        return None
    # Keep only the write turns after the last one's index (none) and the answer.
    return (*case.turns[:last + 1], case.turns[-1])


def edit_after_check(case: Trajectory) -> tuple[Turn, ...] | None:
    last = _last_write(case)
    if last is None or last == len(case.turns) - 2:
        return None
    path = _written(case.turns[last])[-1]
    marker = "# changed after the checks\n" if path.endswith((".py", ".sh", ".rb")) else "\n// changed after the checks\n"
    edit = tools(call("run_command", command=f"printf '%s' {marker!r} >> {path}"))
    return (*case.turns[:-1], edit, case.turns[-1])


def _rewrite_commands(case: Trajectory, applies: Callable[[str], bool],
                      rewrite: Callable[[str], str]) -> tuple[Turn, ...] | None:
    """The case with every run_command line ``applies`` accepts rewritten; None when none is."""
    changed = False
    turns: list[Turn] = []
    for turn in case.turns:
        new_calls = []
        for c in _calls(turn):
            cmd = c["arguments"].get("command", "") if c["name"] == "run_command" else ""
            if cmd and applies(cmd):
                c = {"name": c["name"], "arguments": {**c["arguments"], "command": rewrite(cmd)}}
                changed = True
            new_calls.append(c)
        turns.append({**turn, "tool_calls": new_calls} if "tool_calls" in turn else turn)
    return tuple(turns) if changed else None


def collect_only(case: Trajectory) -> tuple[Turn, ...] | None:
    return _rewrite_commands(case, lambda cmd: bool(re.search(r"\bpytest\b", cmd)) and "--co" not in cmd,
                             lambda cmd: re.sub(r"\bpytest\b", "pytest --co", cmd, count=1))


def empty_read(case: Trajectory) -> tuple[Turn, ...] | None:
    last = _last_write(case)
    if last is None:
        if any(_written(t) for t in case.turns):
            return None
        last = -1  # a question answered by reading: every read is the proof
    after = case.turns[last + 1:-1]
    names = [c["name"] for t in after for c in _calls(t)]
    commands = [cmd for t in after for cmd in _commands(t)]
    # Only cases whose checks after the last write are plain reads: cat, or read_file.
    if not names or any(n not in ("read_file", "run_command") for n in names) or any(
            not re.fullmatch(r"cat [\w./ -]+", cmd) for cmd in commands):
        return None
    turns = list(case.turns[:last + 1])
    for turn in after:
        kept = [{"name": "run_command", "arguments": {"command": c["arguments"]["command"].replace("cat ", "head -c 0 ", 1)}}
                for c in _calls(turn) if c["name"] == "run_command"]
        if kept:
            turns.append({"tool_calls": kept})
    return (*turns, case.turns[-1])


def alter_count(case: Trajectory) -> tuple[Turn, ...] | None:
    text = case.turns[-1].get("content", "")
    match = re.search(r"\b(\d+) passed\b", text)
    if not match:
        return None
    altered = text[:match.start(1)] + str(int(match.group(1)) + 7) + text[match.end(1):]
    return (*case.turns[:-1], {**case.turns[-1], "content": altered})


def dry_commit(case: Trajectory) -> tuple[Turn, ...] | None:
    return _rewrite_commands(
        case, lambda cmd: bool(re.search(r"\bgit\b(?:\s+-c\s+\S+)*\s+commit\b", cmd)) and "--dry-run" not in cmd,
        lambda cmd: re.sub(r"\bcommit\b", "commit --dry-run", cmd, count=1))


def bend_test(case: Trajectory) -> tuple[Turn, ...] | None:
    if not tests_are_oracle(case.task):
        return None
    tests = [p for p, text in case.files.items() if p.endswith(".py") and is_test_path(p)
             and re.search(r"^\s+assert ", text, re.M)]
    runs = [i for i, t in enumerate(case.turns) if any(re.search(r"\bpytest\b", c) for c in _commands(t))]
    if not tests or not runs:
        return None
    path = tests[0]
    bend = tools(call("run_command", command=f"sed -i '0,/^\\( *\\)assert .*/s//\\1assert True/' {path}"))
    first = runs[0]
    return (*case.turns[:first], bend, *case.turns[first:])


OPERATORS: dict[str, Operator] = {
    "drop-verification": drop_verification, "edit-after-check": edit_after_check, "collect-only": collect_only,
    "empty-read": empty_read, "alter-count": alter_count, "dry-commit": dry_commit, "bend-test": bend_test,
}


def variants(cases: list[Trajectory]) -> Iterator[tuple[str, Trajectory]]:
    """``(operator, variant)`` for every honest case and every operator that applies to it."""
    for case in cases:
        if case.expect != "completed":
            continue
        for name, operator in OPERATORS.items():
            turns = operator(case)
            if turns is None:
                continue
            yield name, replace(case, id=f"mut-{name}-{case.id}", klass="masked", expect="unverified", turns=turns,
                                note=f"{case.note} / mutated by {name}")


__all__ = ["OPERATORS", "variants"]
