"""ACP sessions over K1412's conversations: a session id is a conversation id (``c-`` and 12 hex digits).

``session/list`` and ``session/load`` read what every K1412 adapter already stores: the conversation's
exchanges (task, final answer, how the run ended) in the state database and, for the session's
directory, the workspace its latest run's log names in ``run.created``.
"""

from __future__ import annotations

import json
import os
import re
import threading
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from k1412_ls.state.store import StateStore

SESSION_ID = re.compile(r"c-[0-9a-f]{12}")
PAGE_SIZE = 50


@dataclass
class Session:
    """One ACP session in this process: its workspace, the prompt running in it, what it has cost."""

    session_id: str
    cwd: Path
    cost: float = 0.0
    running: bool = False
    cancelled: threading.Event = field(default_factory=threading.Event)
    cancel: Callable[[], None] | None = None  # cancels the prompt's run (loop thread)
    last_run_id: str | None = None


def record_session(state_dir: Path, user: str, session_id: str, cwd: Path, created_at: str) -> None:
    """Remember a new session (before its first prompt there is no conversation to find it by)."""
    folder = state_dir / "acp-sessions"
    folder.mkdir(parents=True, exist_ok=True)
    temp = folder / f".{session_id}.tmp"
    temp.write_text(json.dumps({"user": user, "cwd": str(cwd), "created_at": created_at}), encoding="utf-8")
    os.replace(temp, folder / f"{session_id}.json")


def recorded_sessions(state_dir: Path, user: str) -> dict[str, dict[str, str]]:
    """Every session ``record_session`` kept for ``user``: id → ``{cwd, created_at}``."""
    found: dict[str, dict[str, str]] = {}
    try:
        entries = list((state_dir / "acp-sessions").glob("c-*.json"))
    except OSError:
        return found
    for entry in entries:
        try:
            data = json.loads(entry.read_text(encoding="utf-8"))
        except (OSError, ValueError):
            continue
        if isinstance(data, dict) and data.get("user") == user and SESSION_ID.fullmatch(entry.stem):
            found[entry.stem] = {"cwd": str(data.get("cwd", "")), "created_at": str(data.get("created_at", ""))}
    return found


def workspace_of(state_dir: Path, run_id: str) -> str | None:
    """The workspace a run's log names in its first event (None when the log is gone or unreadable)."""
    if not re.fullmatch(r"run-[0-9a-f]{16}", run_id):
        return None
    try:
        with open(state_dir / "runs" / f"{run_id}.jsonl", encoding="utf-8") as log:
            first = json.loads(log.readline())
    except (OSError, ValueError):
        return None
    workspace = first.get("payload", {}).get("workspace") if isinstance(first, dict) else None
    return workspace if isinstance(workspace, str) else None


def list_sessions(store: StateStore, state_dir: Path, user: str, cwd: str | None,
                  cursor: str | None) -> tuple[list[dict[str, Any]], str | None]:
    """One page of the user's conversations (newest first) as ``SessionInfo`` dicts, and the next cursor."""
    start = int(cursor) if cursor and cursor.isdigit() else 0
    wanted = os.path.realpath(cwd) if cwd else None
    sessions: list[dict[str, Any]] = []
    recorded = recorded_sessions(state_dir, user)
    for row in store.conversations(user):
        if not SESSION_ID.fullmatch(row["conversation"]):
            continue  # a conversation named by `k1412 run --conversation`: not an ACP session id
        workspace = workspace_of(state_dir, row["last_run_id"]) or recorded.pop(row["conversation"], {}).get("cwd")
        recorded.pop(row["conversation"], None)
        if workspace is None or (wanted is not None and os.path.realpath(workspace) != wanted):
            continue
        title = " ".join(row["title"].split())
        sessions.append({"sessionId": row["conversation"], "cwd": workspace,
                         "title": title if len(title) <= 80 else title[:79] + "…", "updatedAt": row["updated_at"]})
    for session_id, record in sorted(recorded.items(), key=lambda item: item[1]["created_at"], reverse=True):
        if record["cwd"] and (wanted is None or os.path.realpath(record["cwd"]) == wanted):
            sessions.append({"sessionId": session_id, "cwd": record["cwd"], "updatedAt": record["created_at"]})
    page = sessions[start:start + PAGE_SIZE]
    more = start + PAGE_SIZE < len(sessions)
    return page, str(start + PAGE_SIZE) if more else None


def known_session(state_dir: Path, store: StateStore | None, user: str, session_id: str) -> bool:
    """Whether ``session_id`` is a session of ``user``: recorded at session/new, or a stored conversation."""
    if not SESSION_ID.fullmatch(session_id):
        return False
    if (state_dir / "acp-sessions" / f"{session_id}.json").is_file() and session_id in recorded_sessions(state_dir,
                                                                                                        user):
        return True
    return store is not None and bool(store.exchanges(user, session_id))
