"""Binds the completion gate to a run's event stream (the ledger only ever sees events)."""

from __future__ import annotations

import os
import re
from collections.abc import Iterable
from pathlib import Path

from k1412_ls.core.events import Event, EventBus
from k1412_ls.core.evidence.gate import CompletionGate, Verdict
from k1412_ls.core.evidence.hollow_runners import hollow_runners
from k1412_ls.core.evidence.ledger import EvidenceLedger
from k1412_ls.core.evidence.requirements import derive_requirements
from k1412_ls.core.intent import IntentDecision


class BoundGate:
    """A CompletionGate and the ledger fed by the run's events, as the loop uses them."""

    def __init__(self, gate: CompletionGate, ledger: EvidenceLedger, bus: EventBus | None = None) -> None:
        self.gate = gate
        self.ledger = ledger
        self.max_rejections = gate.max_rejections
        self._bus = bus

    def detach(self) -> None:
        """Stop feeding the ledger (its agent has ended; later events cannot change its verdict)."""
        if self._bus is not None:
            self._bus.remove_sink(self.ledger.record)
            self._bus = None

    @classmethod
    def for_task(cls, task: str, bus: EventBus, agent_id: str | None = None, max_rejections: int = 2,
                 workspace: Path | None = None, decision: IntentDecision | None = None) -> BoundGate:
        """A gate for ``task``; with ``agent_id`` only that sub-agent's own tool events count.

        With ``workspace``, files the task names are resolved against it (see ``resolve_target``);
        ``decision`` is the task's intent when the caller has classified it already.
        """
        ledger = EvidenceLedger(agent_id=agent_id)
        for event in list(bus.history):
            ledger.record(event)
        bus.add_sink(ledger.record)
        resolve = (lambda name: resolve_target(workspace, name)) if workspace is not None else None
        tests = workspace_test_files(workspace) if workspace is not None else None
        hollow = hollow_runners(workspace, tests) if workspace is not None else ()
        requirements = derive_requirements(task, resolve, test_files=tests, decision=decision, hollow=hollow)
        return cls(CompletionGate(requirements, max_rejections=max_rejections), ledger, bus)

    def check(self, final_message: str) -> Verdict:
        return self.gate.check(self.ledger, final_message)

    def state(self) -> dict[str, list[str]]:
        return self.gate.state(self.ledger)


_SKIP = frozenset({".git", "node_modules", "__pycache__", ".venv", "venv", ".tox", ".mypy_cache", ".pytest_cache",
                   ".ruff_cache", "target", ".k1412"})
MAX_RESOLVE_ENTRIES = 20_000


def resolve_target(root: Path, name: str) -> tuple[str, bool]:
    """A named file's workspace path and whether it exists: the path as written if it exists there,
    else the only file in the workspace with that name, else the path as written (to be created)."""
    clean = name.removeprefix("./")
    try:
        if os.path.lexists(root / clean):
            return clean, True
    except (OSError, ValueError):
        return clean, False
    if clean.isupper() and "." not in clean:
        # "the README": README.md, README.rst, README.txt or README itself, at the root.
        for suffix in (".md", ".rst", ".txt", ".markdown"):
            if os.path.isfile(root / (clean + suffix)):
                return clean + suffix, True
    if "/" in clean:
        return clean, False
    found: list[str] = []
    seen = 0
    for directory, dirs, files in os.walk(root):
        dirs[:] = [d for d in dirs if d not in _SKIP]
        seen += len(files)
        if clean in files:
            found.append(os.path.relpath(os.path.join(directory, clean), root))
        if len(found) > 1 or seen > MAX_RESOLVE_ENTRIES:
            return clean, False
    return (found[0], True) if found else (clean, False)


TEST_FILE_NAME = re.compile(r"^(?:test_.*\.py|.*_test\.(?:py|go)|.*\.(?:test|spec)\.[cm]?[jt]sx?|test_[^.]*\.(?:c|cc|cpp))$")
MAX_TEST_FILES = 2_000


def workspace_test_files(root: Path) -> tuple[str, ...] | None:
    """The test files in the workspace (``test_*.py``, ``*_test.go``, ``*.test.js`` …), or None when the tree
    is too big to tell: a run over exactly these files is the whole suite."""
    found: list[str] = []
    seen = 0
    for directory, dirs, files in os.walk(root):
        dirs[:] = [d for d in dirs if d not in _SKIP and not d.startswith(".")]
        seen += len(files)
        if seen > MAX_RESOLVE_ENTRIES or len(found) > MAX_TEST_FILES:
            return None
        found.extend(os.path.relpath(os.path.join(directory, f), root) for f in files if TEST_FILE_NAME.match(f))
    return tuple(sorted(found))


def files_changed(events: Iterable[Event]) -> list[str]:
    """Workspace-relative paths written, created, moved or deleted by successful tool calls, in order."""
    seen: dict[str, None] = {}
    for event in events:
        if event.type != "tool.completed":
            continue
        facts = event.payload.get("facts") or {}
        if facts.get("kind") in ("exec", "mcp"):
            entries = facts.get("changes") or []
        elif facts.get("kind") == "write" and not facts.get("unchanged"):
            entries = facts.get("writes") or []
        else:
            continue
        for entry in entries:
            if not isinstance(entry, dict):
                continue
            for key in ("from", "path"):
                path = entry.get(key)
                if isinstance(path, str) and path:
                    seen.setdefault(path, None)
    return list(seen)
