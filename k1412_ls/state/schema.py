"""Schema of the state database and its ordered migrations.

The schema version lives in ``PRAGMA user_version``. ``MIGRATIONS[i]`` takes
a database from version ``i`` to ``i + 1``; steps are only ever appended, so a
database written by any older K1412 can be brought up to date in place. A
database whose version is newer than ``SCHEMA_VERSION`` was written by a newer
K1412 and is refused rather than guessed at.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Sequence


class SchemaTooNewError(Exception):
    """The database was written by a newer K1412 than this one."""

    def __init__(self, found: int, known: int) -> None:
        super().__init__(f"schema {found} is newer than {known}")
        self.found = found
        self.known = known


# Version 1: per-user memories and per-(user, conversation) plans.
_V1 = (
    """
    CREATE TABLE memories (
        seq        INTEGER PRIMARY KEY AUTOINCREMENT,
        id         TEXT NOT NULL UNIQUE,
        user       TEXT NOT NULL,
        text       TEXT NOT NULL,
        created_at TEXT NOT NULL
    )
    """,
    "CREATE INDEX memories_by_user ON memories (user, seq)",
    """
    CREATE TABLE plans (
        user         TEXT NOT NULL,
        conversation TEXT NOT NULL,
        items        TEXT NOT NULL,
        updated_at   TEXT NOT NULL,
        PRIMARY KEY (user, conversation)
    )
    """,
)

# Version 2: conversation history, one row per finished run (task + final answer).
_V2 = (
    """
    CREATE TABLE exchanges (
        seq          INTEGER PRIMARY KEY AUTOINCREMENT,
        user         TEXT NOT NULL,
        conversation TEXT NOT NULL,
        run_id       TEXT NOT NULL,
        task         TEXT NOT NULL,
        answer       TEXT NOT NULL,
        created_at   TEXT NOT NULL
    )
    """,
    "CREATE INDEX exchanges_by_conversation ON exchanges (user, conversation, seq)",
)

# Version 3: how each exchange's run ended and the files it changed (the digest of turns that no longer
# fit the context window says them).
_V3 = (
    "ALTER TABLE exchanges ADD COLUMN status TEXT NOT NULL DEFAULT ''",
    "ALTER TABLE exchanges ADD COLUMN files_changed TEXT NOT NULL DEFAULT '[]'",
)

MIGRATIONS: tuple[Sequence[str], ...] = (_V1, _V2, _V3)
SCHEMA_VERSION = len(MIGRATIONS)


def schema_version(conn: sqlite3.Connection) -> int:
    """The version recorded in the database (0 for a new, empty file)."""
    return int(conn.execute("PRAGMA user_version").fetchone()[0])


def migrate(conn: sqlite3.Connection, target: int = SCHEMA_VERSION) -> int:
    """Bring the database up to ``target`` and return the version it was at before.

    ``conn`` must be in autocommit mode (``isolation_level=None``). The check
    and all steps run in one ``BEGIN IMMEDIATE`` transaction, so two processes
    opening a fresh file at once cannot both migrate it, and a failed step
    leaves the previous version intact.
    """
    if not 0 <= target <= SCHEMA_VERSION:
        raise ValueError(f"target schema {target} is not between 0 and {SCHEMA_VERSION}")
    current = schema_version(conn)
    if current > SCHEMA_VERSION:
        raise SchemaTooNewError(current, SCHEMA_VERSION)
    if current >= target:
        return current
    conn.execute("BEGIN IMMEDIATE")
    try:
        # Re-read under the write lock: another process may have migrated meanwhile.
        current = schema_version(conn)
        if current > SCHEMA_VERSION:
            raise SchemaTooNewError(current, SCHEMA_VERSION)
        for step in MIGRATIONS[current:target]:
            for statement in step:
                conn.execute(statement)
        if current < target:
            # PRAGMA takes no parameters; target is a checked int.
            conn.execute(f"PRAGMA user_version = {int(target)}")
        conn.execute("COMMIT")
    except BaseException:
        conn.execute("ROLLBACK")
        raise
    return current
