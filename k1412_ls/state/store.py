"""The state store: memories, plans and conversations in one SQLite file.

One :class:`StateStore` is shared by every run of a process. SQLite runs in
WAL mode with a busy timeout, every write is a ``BEGIN IMMEDIATE``
transaction (so a reader never has to upgrade its lock, the case a busy
timeout cannot retry), and a lock serializes this process's threads on its
one connection. Other processes share the file through SQLite's own locking.

Every failure is a :class:`StateError` whose message is one sentence saying
what to do next; no sqlite3 exception escapes.
"""

from __future__ import annotations

import json
import os
import secrets
import sqlite3
import threading
import time
import unicodedata
from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator

from k1412_ls.limits import LIMITS
from k1412_ls.state.schema import SCHEMA_VERSION, SchemaTooNewError, migrate
from k1412_ls.text import lossless

DB_FILENAME = "k1412.sqlite3"
BUSY_TIMEOUT_S = 15.0
MEMORY_MAX_CHARS = LIMITS.max_memory_chars
RECALL_MAX = LIMITS.max_recall
PLAN_MAX_ITEMS = LIMITS.max_plan_items
STEP_MAX_CHARS = LIMITS.max_step_chars
EXCHANGE_MAX_CHARS = 1_000_000
EXCHANGE_MAX_FILES = 200  # files_changed kept per exchange (the digest shows a few)
NAME_MAX_CHARS = 200
_ID_ATTEMPTS = 5


class StateError(Exception):
    """A state problem, stated as one sentence for the user or the model."""


@dataclass(frozen=True)
class Memory:
    """One persistent memory of one user."""

    id: str
    text: str
    created_at: str

    def to_dict(self) -> dict[str, str]:
        return {"id": self.id, "text": self.text, "created_at": self.created_at}


PlanStatus = Literal["pending", "in_progress", "completed"]


class PlanItem(BaseModel):
    """One step of a plan."""

    model_config = ConfigDict(extra="forbid")

    step: str = Field(min_length=1, max_length=STEP_MAX_CHARS, description="What this step does.")
    status: PlanStatus = Field(description="pending, in_progress or completed; at most one in_progress.")

    @field_validator("step")
    @classmethod
    def _step_has_text(cls, value: str) -> str:
        value = value.strip()
        if not value:
            raise ValueError("a step needs a description")
        return value


def new_conversation_id() -> str:
    """A fresh conversation id, ``c-<12 hex>``."""
    return f"c-{secrets.token_hex(6)}"


def new_memory_id() -> str:
    """A fresh memory id, ``m-<12 hex>``."""
    return f"m-{secrets.token_hex(6)}"


def caseless(text: str) -> str:
    """Unicode canonical caseless form: 'ÄPFEL', 'äpfel' and a decomposed 'äpfel' all match."""
    return unicodedata.normalize("NFD", unicodedata.normalize("NFD", text).casefold())


def _now() -> str:
    now = datetime.now(UTC)
    return now.strftime("%Y-%m-%dT%H:%M:%S.") + f"{now.microsecond // 1000:03d}Z"


def _check_name(kind: str, value: str) -> str:
    if not isinstance(value, str) or not value.strip():
        raise StateError(f"The {kind} id is empty; pass a non-empty {kind} id.")
    if len(value) > NAME_MAX_CHARS:
        raise StateError(f"The {kind} id is longer than {NAME_MAX_CHARS} characters; use a shorter {kind} id.")
    return value


def _to_db(text: str) -> str | bytes:
    """Text for a TEXT column, losslessly: a string with a lone surrogate (a model's reply, a file name that is
    not UTF-8) cannot be UTF-8, so it is kept as its ``surrogatepass`` bytes in a BLOB, read back by _from_db."""
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return text.encode("utf-8", "surrogatepass")
    return text


def _from_db(value: Any) -> str:
    if isinstance(value, bytes):
        return value.decode("utf-8", "surrogatepass")
    return "" if value is None else str(value)


def _cap(text: str) -> str:
    if len(text) <= EXCHANGE_MAX_CHARS:
        return text
    omitted = len(text) - EXCHANGE_MAX_CHARS
    return f"{text[:EXCHANGE_MAX_CHARS]}\n…[{omitted} characters not kept in the conversation history]"


class StateStore:
    """Memories per user, plans per (user, conversation), conversation history; persistent."""

    def __init__(self, path: Path) -> None:
        self.path = Path(path)
        self._lock = threading.Lock()
        self._conn = self._open()

    @classmethod
    def open_default(cls) -> StateStore:
        """The store in the configured state directory (``k1412_ls.config.state_dir()``)."""
        from k1412_ls.locations import state_dir

        return cls(state_dir() / DB_FILENAME)

    # -- lifecycle -------------------------------------------------------------

    def _open(self) -> sqlite3.Connection:
        try:
            # Memories and conversations are private: only the owner may read the files
            # (SQLite gives the -wal and -shm files the database file's mode).
            self.path.parent.mkdir(mode=0o700, parents=True, exist_ok=True)
            if not self.path.exists():
                os.close(os.open(self.path, os.O_CREAT | os.O_WRONLY, 0o600))
        except OSError as exc:
            raise StateError(
                f"Cannot create the state database {self.path} ({exc.strerror or exc}); "
                "make its directory writable or set K1412_HOME to another directory."
            ) from None
        deadline = time.monotonic() + BUSY_TIMEOUT_S
        pause = 0.01
        while True:
            try:
                return self._connect()
            except sqlite3.OperationalError as exc:
                # Processes opening a fresh file at once can meet in SQLite's deadlock avoidance (two shared
                # locks both wanting to switch the file to WAL): that BUSY skips the busy handler, so the
                # whole opening is tried again, within the same bound a busy lock gets.
                if "locked" not in str(exc) or time.monotonic() + pause > deadline:
                    raise StateError(
                        f"Cannot open the state database {self.path} ({exc}); check that it is a writable K1412 "
                        "database or set K1412_HOME to another directory."
                    ) from None
                time.sleep(pause * (1 + secrets.randbelow(100) / 100))
                pause = min(pause * 2, 0.5)

    def _connect(self) -> sqlite3.Connection:
        """One attempt: connect, switch to WAL, bring the schema up to date."""
        conn: sqlite3.Connection | None = None
        try:
            # check_same_thread=False: tools run in worker threads; self._lock serializes them.
            conn = sqlite3.connect(self.path, timeout=BUSY_TIMEOUT_S, isolation_level=None, check_same_thread=False)
            conn.execute(f"PRAGMA busy_timeout = {int(BUSY_TIMEOUT_S * 1000)}")
            conn.execute("PRAGMA journal_mode = WAL")
            # WAL + NORMAL survives a process crash; only a power loss may drop the last commit.
            conn.execute("PRAGMA synchronous = NORMAL")
            migrate(conn)
            return conn
        except sqlite3.OperationalError:
            if conn is not None:
                conn.close()
            raise
        except SchemaTooNewError as exc:
            if conn is not None:
                conn.close()
            raise StateError(
                f"The state database {self.path} was written by a newer K1412 (schema {exc.found}, this "
                f"version reads up to {exc.known}); upgrade K1412 or set K1412_HOME to another directory."
            ) from None
        except sqlite3.Error as exc:
            if conn is not None:
                conn.close()
            raise StateError(
                f"Cannot open the state database {self.path} ({exc}); check that it is a writable K1412 "
                "database or set K1412_HOME to another directory."
            ) from None

    def close(self) -> None:
        """Close the connection; later calls raise StateError."""
        with self._lock:
            self._conn.close()

    def __enter__(self) -> StateStore:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.close()

    @property
    def schema_version(self) -> int:
        return SCHEMA_VERSION

    # -- transactions ----------------------------------------------------------

    def _failure(self, exc: sqlite3.Error) -> StateError:
        if isinstance(exc, sqlite3.ProgrammingError):
            return StateError("The state store is closed; restart the run.")
        if "locked" in str(exc) or "busy" in str(exc):
            return StateError(
                f"The state database {self.path} stayed locked by another K1412 process for "
                f"{BUSY_TIMEOUT_S:.0f} s; try again."
            )
        return StateError(f"The state database {self.path} failed ({exc}); check the disk and try again.")

    @contextmanager
    def _write(self) -> Iterator[sqlite3.Connection]:
        with self._lock:
            try:
                self._conn.execute("BEGIN IMMEDIATE")
            except sqlite3.Error as exc:
                raise self._failure(exc) from None
            try:
                yield self._conn
                self._conn.execute("COMMIT")
            except BaseException as exc:
                try:
                    self._conn.execute("ROLLBACK")
                except sqlite3.Error:
                    pass  # the original error is the one worth reporting
                if isinstance(exc, sqlite3.Error):
                    raise self._failure(exc) from None
                raise

    @contextmanager
    def _read(self) -> Iterator[sqlite3.Connection]:
        with self._lock:
            try:
                yield self._conn
            except sqlite3.Error as exc:
                raise self._failure(exc) from None

    # -- memories --------------------------------------------------------------

    def remember(self, user: str, text: str) -> str:
        """Store a memory for ``user`` and return its id (``m-<12 hex>``)."""
        _check_name("user", user)
        text = text.strip() if isinstance(text, str) else ""
        if not text:
            raise StateError("The memory text is empty; pass the fact to remember.")
        if len(text) > MEMORY_MAX_CHARS:
            raise StateError(
                f"The memory is {len(text)} characters long; keep it under {MEMORY_MAX_CHARS} characters."
            )
        with self._write() as conn:
            for _ in range(_ID_ATTEMPTS):
                memory_id = new_memory_id()
                try:
                    conn.execute(
                        "INSERT INTO memories (id, user, text, created_at) VALUES (?, ?, ?, ?)",
                        (memory_id, user, _to_db(text), _now()),
                    )
                    return memory_id
                except sqlite3.IntegrityError:
                    continue  # a 48-bit id collided; draw another
        raise StateError("Could not allocate a memory id; try again.")

    def recall(self, user: str, query: str | None = None, limit: int = 8) -> list[Memory]:
        """The user's memories, most recent first, optionally those containing ``query`` (any case).

        ``limit`` is clamped to 1..100. Matching is done in Python with Unicode
        caseless comparison, because SQLite's LIKE folds ASCII letters only.
        """
        _check_name("user", user)
        limit = max(1, min(RECALL_MAX, int(limit)))
        needle = caseless(query.strip()) if query and query.strip() else None
        found: list[Memory] = []
        with self._read() as conn:
            cursor = conn.execute(
                "SELECT id, text, created_at FROM memories WHERE user = ? ORDER BY seq DESC", (user,)
            )
            for memory_id, stored, created_at in cursor:
                text = _from_db(stored)
                if needle is None or needle in caseless(text):
                    found.append(Memory(memory_id, text, created_at))
                    if len(found) >= limit:
                        break
            cursor.close()
        return found

    def forget(self, user: str, memory_id: str) -> bool:
        """Delete one of the user's own memories; False if it is unknown or someone else's."""
        _check_name("user", user)
        with self._write() as conn:
            cursor = conn.execute("DELETE FROM memories WHERE id = ? AND user = ?", (memory_id, user))
            return cursor.rowcount > 0

    # -- plans -----------------------------------------------------------------

    def set_plan(self, user: str, conversation: str, items: Sequence[PlanItem | Mapping[str, Any]]) -> list[PlanItem]:
        """Replace the plan of (user, conversation); at most one step may be in_progress."""
        _check_name("user", user)
        _check_name("conversation", conversation)
        plan = validate_plan(items)
        encoded = lossless.dumps([item.model_dump() for item in plan])
        with self._write() as conn:
            conn.execute(
                "INSERT INTO plans (user, conversation, items, updated_at) VALUES (?, ?, ?, ?) "
                "ON CONFLICT (user, conversation) DO UPDATE SET items = excluded.items, "
                "updated_at = excluded.updated_at",
                (user, conversation, encoded, _now()),
            )
        return plan

    def get_plan(self, user: str, conversation: str) -> list[PlanItem]:
        """The current plan of (user, conversation); empty when none was set."""
        _check_name("user", user)
        _check_name("conversation", conversation)
        with self._read() as conn:
            row = conn.execute(
                "SELECT items FROM plans WHERE user = ? AND conversation = ?", (user, conversation)
            ).fetchone()
        if row is None:
            return []
        return [PlanItem.model_validate(item) for item in json.loads(row[0])]

    # -- conversations ---------------------------------------------------------

    @staticmethod
    def new_conversation_id() -> str:
        """A fresh conversation id, ``c-<12 hex>``."""
        return new_conversation_id()

    def append_exchange(self, user: str, conversation: str, run_id: str, task: str, answer: str,
                        status: str = "", files_changed: Sequence[str] = ()) -> None:
        """Record one finished run of a conversation: the task, the final message, how it ended, files changed."""
        _check_name("user", user)
        _check_name("conversation", conversation)
        files = lossless.dumps([str(f) for f in list(files_changed)[:EXCHANGE_MAX_FILES]])
        with self._write() as conn:
            conn.execute(
                "INSERT INTO exchanges (user, conversation, run_id, task, answer, created_at, status, files_changed) "
                "VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
                (user, conversation, run_id, _to_db(_cap(task or "")), _to_db(_cap(answer or "")), _now(),
                 str(status or ""), files),
            )

    def exchanges(self, user: str, conversation: str) -> list[dict[str, Any]]:
        """The conversation's finished runs, oldest first: ``task``, ``answer``, ``status``, ``files_changed``."""
        _check_name("user", user)
        _check_name("conversation", conversation)
        with self._read() as conn:
            rows = conn.execute(
                "SELECT task, answer, status, files_changed FROM exchanges WHERE user = ? AND conversation = ? "
                "ORDER BY seq", (user, conversation)).fetchall()
        result: list[dict[str, Any]] = []
        for task, answer, status, files in rows:
            try:
                changed = [str(f) for f in json.loads(files or "[]")]
            except (ValueError, TypeError):
                changed = []
            result.append({"task": _from_db(task), "answer": _from_db(answer), "status": status,
                           "files_changed": changed})
        return result

    def conversations(self, user: str, limit: int = 1000) -> list[dict[str, str]]:
        """The user's conversations, most recently continued first: ``conversation``, ``title`` (its first task),
        ``updated_at`` and ``last_run_id``."""
        _check_name("user", user)
        with self._read() as conn:
            rows = conn.execute(
                "SELECT conversation, MAX(seq) AS last, MIN(seq) AS first FROM exchanges WHERE user = ? "
                "GROUP BY conversation ORDER BY last DESC LIMIT ?", (user, max(0, int(limit)))).fetchall()
            found: list[dict[str, str]] = []
            for conversation, last, first in rows:
                task = conn.execute("SELECT task FROM exchanges WHERE seq = ?", (first,)).fetchone()[0]
                run_id, created = conn.execute("SELECT run_id, created_at FROM exchanges WHERE seq = ?",
                                               (last,)).fetchone()
                found.append({"conversation": conversation, "title": _from_db(task), "updated_at": created,
                              "last_run_id": run_id})
        return found

    def history(self, user: str, conversation: str, limit: int | None = None) -> list[dict[str, str]]:
        """The conversation as chat messages, oldest first; ``limit`` keeps the latest N exchanges.

        A run that ended without an answer contributes its user message only.
        """
        _check_name("user", user)
        _check_name("conversation", conversation)
        sql = "SELECT task, answer FROM exchanges WHERE user = ? AND conversation = ? ORDER BY seq DESC"
        params: tuple[Any, ...] = (user, conversation)
        if limit is not None:
            sql += " LIMIT ?"
            params += (max(0, int(limit)),)
        with self._read() as conn:
            rows = conn.execute(sql, params).fetchall()
        messages: list[dict[str, str]] = []
        for stored_task, stored_answer in reversed(rows):
            task, answer = _from_db(stored_task), _from_db(stored_answer)
            if task:
                messages.append({"role": "user", "content": task})
            if answer:
                messages.append({"role": "assistant", "content": answer})
        return messages


def validate_plan(items: Sequence[PlanItem | Mapping[str, Any]]) -> list[PlanItem]:
    """Check a whole plan: valid items, at most PLAN_MAX_ITEMS, at most one in_progress."""
    if len(items) > PLAN_MAX_ITEMS:
        raise StateError(f"The plan has {len(items)} steps; keep it to {PLAN_MAX_ITEMS} steps or fewer.")
    plan: list[PlanItem] = []
    for index, item in enumerate(items, start=1):
        try:
            plan.append(item if isinstance(item, PlanItem) else PlanItem.model_validate(item))
        except ValidationError as exc:
            err = exc.errors()[0]
            where = ".".join(str(p) for p in err["loc"]) or "item"
            raise StateError(f"Plan step {index} is invalid ('{where}' {err['msg'].lower()}); fix it.") from None
    active = [item.step for item in plan if item.status == "in_progress"]
    if len(active) > 1:
        named = ", ".join(f"'{step}'" for step in active)
        raise StateError(
            f"Only one plan step can be in_progress, but {len(active)} are: {named}; keep one in_progress "
            "and mark the others pending or completed."
        )
    return plan
