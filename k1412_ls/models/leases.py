"""Leases on a managed server: which processes hold it (pid plus start time, so a reused pid is no holder)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any


def process_start_time(pid: int) -> str | None:
    """The start time of ``pid`` (field 22 of /proc/PID/stat), None when it is not running.

    Stored with each lease so that a pid reused by another process is not taken for the holder.
    """
    try:
        stat = Path(f"/proc/{pid}/stat").read_text(encoding="ascii", errors="replace")
    except OSError:
        return None
    fields = stat[stat.rfind(")") + 2:].split()
    if fields and fields[0] == "Z":
        return None  # a zombie holds nothing
    return fields[19] if len(fields) > 19 else None


def holder_alive(lease: dict[str, Any]) -> bool:
    pid = lease.get("pid")
    return isinstance(pid, int) and process_start_time(pid) == lease.get("start")


def read_leases(lease_dir: Path) -> list[tuple[Path, dict[str, Any]]]:
    leases: list[tuple[Path, dict[str, Any]]] = []
    for path in sorted(lease_dir.glob("*.json")):
        try:
            data = json.loads(path.read_text(encoding="utf-8"))
        except (OSError, ValueError):
            continue
        if isinstance(data, dict):
            leases.append((path, data))
    return leases
