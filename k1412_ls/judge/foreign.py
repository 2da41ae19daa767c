"""A run of another agent, normalised: its task, its steps in order, its final answer.

Every parser produces a :class:`ForeignRun`. A :class:`Step` is one action of the agent with what came
back: a shell command (its exit status and output), a background process (started, polled or
stopped), a structured file tool (write, edit, read, search), or something the mapping cannot turn into evidence (``kind="unmapped"``, named by ``tool``).
"""

from __future__ import annotations

import posixpath
from dataclasses import dataclass, field

STEP_KINDS = ("command", "process", "write", "edit", "read", "search", "note", "unmapped")


class UnreadableRun(Exception):
    """The file is not a run of the format asked for (one sentence for the user)."""


@dataclass(frozen=True)
class Step:
    """One action of the agent and its result.

    ``exit_code`` is None when the format gave none (a timeout, a killed command, a
    result without a status); ``ok`` is the tool's own success flag for structured
    tools. ``content`` is the text a write or edit put in the file, when known.
    """

    kind: str
    tool: str
    command: str = ""
    exit_code: int | None = None
    output: str = ""
    path: str = ""
    content: str | None = None
    ok: bool = True
    timed_out: bool = False
    background: bool = False
    note: str = ""  # why a step is unmapped, or what a note step was
    process_id: str = ""  # a background process: its id, and the operation (start | poll | cancel)
    op: str = ""
    status: str = ""  # a background process after the operation: running | exited | killed

    def __post_init__(self) -> None:
        if self.kind not in STEP_KINDS:
            raise ValueError(f"unknown step kind {self.kind!r} (one of {', '.join(STEP_KINDS)})")


@dataclass
class ForeignRun:
    """One run read from a file of another agent's format."""

    file: str
    format: str
    task: str
    steps: list[Step]
    final_message: str = ""
    root: str = ""  # the agent's working directory (absolute), when the format says it
    submitted: tuple[str, ...] | None = None  # files the final diff changed (None: the format has no diff)
    ended: str = ""  # how the agent said it ended (exit_status, a submit step, a timeout …)
    problems: list[str] = field(default_factory=list)  # parse problems that lower confidence (named)


def relative_to_root(path: str, root: str, cwd: str = "") -> str | None:
    """``path`` as a workspace path (relative to ``root``), or None when it lies outside the workspace.

    A relative path is taken from ``cwd`` (itself relative to the root). With no known root, absolute
    paths are kept as they are (the run's own paths, compared only with each other).
    """
    text = path.strip()
    if not text:
        return None
    if text.startswith("/"):
        if not root:
            return posixpath.normpath(text)
        base = root.rstrip("/")
        clean = posixpath.normpath(text)
        if clean == base:
            return "."
        if clean.startswith(base + "/"):
            return clean[len(base) + 1:]
        return None
    if text.startswith("~"):
        return None
    joined = posixpath.normpath(posixpath.join(cwd or ".", text))
    if joined.startswith(".."):
        return None
    return joined
