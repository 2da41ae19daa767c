"""After every tool call, what its changes did to the tests: the ``test_integrity`` facts.

The gate reads only events, and an event never holds a file's text, so what a change did to a test file
is worked out here, right after the tool that made it and before its ``tool.completed`` event is written:
the file as the run found it (the undo journal's pre-image, kept before the run's first change to each
path) against the file now (``core.evidence.test_integrity``). The finding goes into the event's facts as
``test_integrity: [{path, change, why}]``, so a replay judges exactly what the live run judged.
"""

from __future__ import annotations

from typing import Any, Protocol

from k1412_ls.core.evidence.test_integrity import IntegrityFinding, compare, is_test_path


class PriorStates(Protocol):
    """Where the run's starting state of a path comes from (the undo journal provides both)."""

    def prior_bytes(self, rel: str) -> tuple[str, bytes | None]: ...

    def current_bytes(self, rel: str) -> tuple[str, bytes | None]: ...


def changed_paths(facts: dict[str, Any]) -> list[str]:
    """Every path a tool result says it changed (writes of file tools, changes of commands, moves' origins)."""
    entries: list[Any] = []
    if facts.get("kind") == "write" and not facts.get("unchanged"):
        entries = list(facts.get("writes") or [])
    elif facts.get("kind") == "exec":
        entries = list(facts.get("changes") or [])
    found: list[str] = []
    for entry in entries:
        if not isinstance(entry, dict):
            continue
        for key in ("from", "path"):
            path = entry.get(key)
            if isinstance(path, str) and path and path not in found:
                found.append(path.removeprefix("./"))
    return found


def _text(kind: str, data: bytes | None) -> tuple[bool, str | None]:
    """(known, text): absent is known and None; a file that is not text is not known."""
    if kind == "absent":
        return True, None
    if kind != "file" or data is None or b"\x00" in data[:8192]:
        return False, None
    try:
        return True, data.decode("utf-8")
    except UnicodeDecodeError:
        return False, None


class TestWatch:
    """Compares every test file a tool call changed with the run's starting state of it."""

    def __init__(self, states: PriorStates) -> None:
        self.states = states

    def finding(self, rel: str) -> IntegrityFinding:
        known_before, before = _text(*self.states.prior_bytes(rel))
        known_now, now = _text(*self.states.current_bytes(rel))
        if known_before and known_now:
            return compare(rel, before, now)
        if known_now and now is None:
            return IntegrityFinding(rel, "removed", f"{rel} was removed, so its tests no longer run")
        return IntegrityFinding(rel, "unknown", f"what {rel} held before this run is not known, so its tests "
                                "cannot be shown to be unchanged")

    def annotate(self, facts: dict[str, Any]) -> list[dict[str, str]] | None:
        """The ``test_integrity`` facts for one tool result, or None when it changed no test file."""
        findings = [self.finding(rel).as_fact() for rel in changed_paths(facts) if is_test_path(rel)]
        return findings or None


__all__ = ["PriorStates", "TestWatch", "changed_paths"]
