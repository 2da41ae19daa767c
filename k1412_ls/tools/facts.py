"""Evidence facts: what a tool result tells the event log (and so the evidence gate).

Facts go into the ``tool.completed`` payload under ``facts``; the evidence
ledger reads only events, so a live run and a replay judge the same facts.
They are public: paths, hashes, sizes, exit codes, redacted output excerpts
and numeric tokens, never write bodies. Kinds:

- ``write``: ``writes`` = [{path, action (create|update|delete|move), sha256,
  bytes, numbers, measurements, shebang, from?}], ``unchanged`` (bool) when a
  write was skipped as identical; ``measurements`` are the numbers the text
  states as measurements (``core.numbers.extract_measurements``) and
  ``shebang`` says the text starts with ``#!`` (an executable script);
- ``read``: ``paths`` read (file contents seen);
- ``inspect``: ``paths`` listed, stat'ed or searched;
- ``exec``: ``command``, ``cwd``, ``exit_code`` (None when killed), ``timed_out``,
  ``cancelled``, ``output`` (excerpt), ``numbers`` (from the whole output);
- ``process``: ``process_id``, ``command``, ``status`` (running|exited|killed),
  ``exit_code``, ``output`` (excerpt of new output), ``numbers``; ``op`` is
  start|poll|cancel;
- ``git``: ``op`` (status|diff), ``paths`` touched by the diff/status;
- ``state``: plan/memory operations (no evidence value);
- ``delegate``: ``agent_id``, ``status`` of a sub-agent;
- ``guard``: a call refused before it ran (``guard`` names which); no evidence value.
"""

from __future__ import annotations

import hashlib
import re
from dataclasses import asdict
from typing import Any

from k1412_ls.text.numbers import extract_measurements, extract_numbers, measurement_units
from k1412_ls.text.runner_summaries import parse_summary
from k1412_ls.text.vocabulary import is_report_path, is_source_path

EXCERPT_CHARS = 4000
NUMBER_SCAN_CHARS = 64 * 1024


def excerpt(text: str, limit: int = EXCERPT_CHARS) -> str:
    """Head and tail of ``text`` within ``limit`` characters (errors live in the tail)."""
    if len(text) <= limit:
        return text
    head = limit // 4
    tail = limit - head
    omitted = len(text) - head - tail
    return f"{text[:head]}\n…[{omitted} characters omitted]…\n{text[-tail:]}"


def write_entry(path: str, text: str | None, action: str, **extra: Any) -> dict[str, Any]:
    """One ``writes`` entry: public facts about the new text (never the text itself)."""
    entry: dict[str, Any] = {"path": path, "action": action}
    if text is not None:
        data = text.encode("utf-8", "surrogatepass")
        # Reports are scanned whole (every measurement in them is checked); other files only
        # at their start, so a 5 MB source edit does not pay for a number scan nobody reads.
        scanned = text if is_report_path(path) else text[:NUMBER_SCAN_CHARS]
        entry.update(sha256=hashlib.sha256(data).hexdigest(), bytes=len(data),
                     numbers=extract_numbers(scanned, 200), measurements=extract_measurements(scanned, 200),
                     units=measurement_units(scanned, 200), shebang=text.startswith("#!"))
        imports = imported_modules(path, text[:NUMBER_SCAN_CHARS])
        if imports:
            entry["imports"] = imports
    entry.update(extra)
    return entry


_IMPORT_PATTERNS = (
    re.compile(r"^\s*(?:from\s+\.?([\w.]+)\s+import|import\s+([\w.]+))", re.MULTILINE),        # Python
    re.compile(r"""(?:require\(\s*|from\s+|import\s+)['"]\.{0,2}/?([\w./-]+?)(?:\.[cm]?[jt]s)?['"]"""),  # JS/TS
    re.compile(r'^\s*#\s*include\s+"([\w./-]+?)(?:\.h|\.hpp)?"', re.MULTILINE),                    # C/C++
)


def imported_modules(path: str, text: str) -> list[str]:
    """Local module names a source file imports or includes (``calc`` for ``from calc import add``)."""
    if not is_source_path(path):
        return []
    names: list[str] = []
    for pattern in _IMPORT_PATTERNS:
        for match in pattern.finditer(text):
            name = next((g for g in match.groups() if g), "")
            stem = name.rsplit("/", 1)[-1].split(".")[0]
            if stem and stem not in names:
                names.append(stem)
    return names[:50]


def write_facts(entries: list[dict[str, Any]], unchanged: bool = False) -> dict[str, Any]:
    return {"kind": "write", "writes": entries, "unchanged": unchanged}


def exec_facts(command: str, cwd: str, exit_code: int | None, output: str, *, timed_out: bool = False,
               cancelled: bool = False) -> dict[str, Any]:
    return {
        "kind": "exec", "command": command, "cwd": cwd, "exit_code": exit_code, "timed_out": timed_out,
        "cancelled": cancelled, "output": excerpt(output), "numbers": extract_numbers(output),
        "units": measurement_units(output, 200), "tests": asdict(parse_summary(output)),
    }
