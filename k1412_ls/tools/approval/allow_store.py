""""Always allow" answers per user, kept in the state directory (hidden from commands) as allow rules."""

from __future__ import annotations

import json
import os
import threading
from pathlib import Path

from k1412_ls.tools.approval.prefix_rules import PrefixRule


class AllowStore:
    """"Always allow" answers per user, kept in the state directory (hidden from commands)."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self._lock = threading.Lock()

    def _read(self) -> dict[str, list[str]]:
        try:
            data = json.loads(self.path.read_text(encoding="utf-8"))
        except (OSError, ValueError):
            return {}
        return data if isinstance(data, dict) else {}

    def rules(self, user: str) -> tuple[PrefixRule, ...]:
        with self._lock:
            entries = self._read().get(user, [])
        return tuple(PrefixRule(tuple(p.split()), "allow") for p in entries if isinstance(p, str) and p.split())

    def add(self, user: str, prefix: tuple[str, ...]) -> None:
        with self._lock:
            data = self._read()
            entries = [p for p in data.get(user, []) if isinstance(p, str)]
            text = " ".join(prefix)
            if text not in entries:
                entries.append(text)
            data[user] = entries
            self.path.parent.mkdir(parents=True, exist_ok=True)
            tmp = self.path.with_name(f".{self.path.name}.{os.getpid()}.tmp")
            tmp.write_text(json.dumps(data, indent=1), encoding="utf-8")
            os.replace(tmp, self.path)


__all__ = ["AllowStore"]
