"""Which files are runs, and which format each one is (``--format auto``).

A file is sniffed by its name and first bytes: ``*.traj.json`` or a JSON object with ``messages``
(mini-swe-agent), a JSON object with ``schema_version`` "ATIF-…" (ATIF), JSON lines of ``type``
assistant/user/system events (Claude Code stream-json), JSON lines with ``run_id``/``seq``/``type``
(a K1412 event log), text in which a shell prompt started ``mini … -t`` (a terminal capture of
mini-swe-agent). A directory is searched for such files; an ATIF file beside a stream-json file of the same
run is the same run re-shaped and is skipped, and of several terminal captures in one folder (a session
log and a screen dump of the same terminal) only the longest is read.
"""

from __future__ import annotations

import json
import os
import re
from collections.abc import Iterator
from pathlib import Path

from k1412_ls.judge.terminal_capture import ANSI as _ANSI

FORMATS = ("auto", "mini-swe-agent", "terminal-bench", "claude-code", "atif", "k1412")
_SKIP_NAMES = frozenset({"labels.json", "results.json", "result.json", "config.json", "README.md"})
_HEAD_BYTES = 64 * 1024


def sniff(path: Path) -> str | None:
    """The format of one file, or None when it is not a run of any known format."""
    try:
        with path.open("rb") as handle:
            head = handle.read(_HEAD_BYTES).decode("utf-8", "replace")
    except OSError:
        return None
    stripped = head.lstrip()
    if path.name.endswith(".traj.json"):
        return "mini-swe-agent"
    first = _first_json_line(stripped)
    if first is not None:
        if str(first.get("schema_version", "")).startswith("ATIF"):
            return "atif"
        if isinstance(first.get("messages"), list):
            return "mini-swe-agent"
        if {"run_id", "seq", "type"} <= set(first):
            return "k1412"
        if first.get("type") in ("system", "assistant", "user", "result"):
            return "claude-code"
        return None
    if stripped.startswith("{"):  # one JSON object over many lines
        if '"schema_version"' in head and '"ATIF' in head:
            return "atif"
        if '"messages"' in head:
            return "mini-swe-agent"
        return None
    if _launches_mini(path, head):
        return "terminal-bench"
    return None


_MINI_LAUNCH = re.compile(r"(?:^|[#$] )mini\b[^\n]*\s-t\s|^mini-swe-agent \(step 1\b", re.MULTILINE)
_CAPTURE_BYTES = 8 * 1024 * 1024


def _launches_mini(path: Path, head: str) -> bool:
    """A terminal capture in which mini-swe-agent was started (the shell prompt, then ``mini … -t``)."""
    if "\x1b[" not in head and "mini" not in head:
        return False
    try:
        with path.open("rb") as handle:
            text = handle.read(_CAPTURE_BYTES).decode("utf-8", "replace")
    except OSError:
        return False
    return bool(_MINI_LAUNCH.search(_ANSI.sub("", text)))


def _first_json_line(text: str) -> dict[str, object] | None:
    line = text.split("\n", 1)[0].strip()
    if not line.startswith("{"):
        return None
    try:
        value = json.loads(line)
    except ValueError:
        return None
    return value if isinstance(value, dict) else None


def find_runs(paths: list[Path], fmt: str = "auto") -> Iterator[tuple[Path, str | None]]:
    """Each run file under ``paths`` with its format (None: a file given by name that is no known run)."""
    for path in paths:
        if path.is_dir():
            for folder, dirs, files in os.walk(path):
                dirs.sort()
                names = sorted(files)
                captures: list[Path] = []
                for name in names:
                    if name in _SKIP_NAMES:
                        continue
                    candidate = Path(folder) / name
                    sniffed = sniff(candidate)
                    found = sniffed if fmt == "auto" or sniffed == fmt else None
                    if found is None:
                        continue
                    if found == "terminal-bench":
                        captures.append(candidate)
                        continue
                    if found == "atif" and any(sniff(Path(folder) / other) == "claude-code"
                                               for other in names if other != name and other not in _SKIP_NAMES):
                        continue
                    yield candidate, found
                if captures:
                    # Two captures of one terminal in one folder (a session log and a pane dump) are one run:
                    # the longest holds the most of it.
                    yield max(captures, key=lambda p: p.stat().st_size), "terminal-bench"
        else:
            yield path, (fmt if fmt != "auto" else sniff(path))
