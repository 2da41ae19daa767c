"""StateStore: persistence, per-user isolation, plans, concurrency and migrations on real SQLite files."""

from __future__ import annotations

import re
import sqlite3
import subprocess
import sys
import textwrap
import threading
from pathlib import Path

import pytest

from k1412_ls.state.schema import MIGRATIONS, SCHEMA_VERSION, migrate, schema_version
from k1412_ls.state.store import (
    MEMORY_MAX_CHARS,
    PlanItem,
    StateError,
    StateStore,
    new_conversation_id,
)


@pytest.fixture
def db(tmp_path: Path) -> Path:
    return tmp_path / "state" / "k1412.sqlite3"


@pytest.fixture
def store(db: Path):
    with StateStore(db) as opened:
        yield opened


def one_sentence(message: str) -> bool:
    """One line, ends with a period, no traceback or exception class names."""
    return "\n" not in message and message.endswith(".") and "Traceback" not in message and "Error:" not in message


def run_python(code: str, *args: str, timeout: float = 60) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-c", textwrap.dedent(code), *args], capture_output=True, text=True, timeout=timeout
    )


# -- persistence ---------------------------------------------------------------


def test_everything_survives_reopening_the_file(db: Path) -> None:
    with StateStore(db) as first:
        memory_id = first.remember("alice", "prefers tabs")
        first.set_plan("alice", "c-1", [PlanItem(step="write code", status="in_progress")])
        first.append_exchange("alice", "c-1", "run-1", "add a test", "added tests/test_x.py")
    with StateStore(db) as second:
        assert [(m.id, m.text) for m in second.recall("alice")] == [(memory_id, "prefers tabs")]
        assert second.get_plan("alice", "c-1") == [PlanItem(step="write code", status="in_progress")]
        assert second.history("alice", "c-1") == [
            {"role": "user", "content": "add a test"},
            {"role": "assistant", "content": "added tests/test_x.py"},
        ]


def test_a_second_process_reads_what_the_first_wrote(store: StateStore, db: Path) -> None:
    memory_id = store.remember("alice", "deploys on Fridays")
    store.set_plan("alice", "c-9", [{"step": "ship", "status": "pending"}])
    child = run_python(
        """
        import sys
        from pathlib import Path
        from k1412_ls.state.store import StateStore
        s = StateStore(Path(sys.argv[1]))
        print(s.recall("alice")[0].id, s.recall("alice")[0].text, sep="|")
        print(s.get_plan("alice", "c-9")[0].step)
        s.remember("alice", "written by the child")
        """,
        str(db),
    )
    assert child.returncode == 0, child.stderr
    assert child.stdout.splitlines() == [f"{memory_id}|deploys on Fridays", "ship"]
    # And the parent's open connection sees the child's write.
    assert store.recall("alice", limit=1)[0].text == "written by the child"


# -- memories ------------------------------------------------------------------


def test_recall_is_newest_first_and_limited(store: StateStore) -> None:
    ids = [store.remember("alice", f"fact {n}") for n in range(12)]
    recalled = store.recall("alice")
    assert [m.id for m in recalled] == list(reversed(ids))[:8]
    assert [m.text for m in store.recall("alice", limit=3)] == ["fact 11", "fact 10", "fact 9"]
    assert all(re.fullmatch(r"m-[0-9a-f]{12}", memory_id) for memory_id in ids)


@pytest.mark.parametrize(
    ("requested", "expected"),
    [(0, 1), (-5, 1), (1, 1), (100, 100), (1000, 100)],
)
def test_recall_limit_is_clamped_to_1_through_100(store: StateStore, requested: int, expected: int) -> None:
    for n in range(120):
        store.remember("alice", f"fact {n}")
    assert len(store.recall("alice", limit=requested)) == expected


@pytest.mark.parametrize(
    ("stored", "query", "found"),
    [
        ("I like äpfel", "ÄPFEL", True),
        ("ÄPFEL are red", "äpfel", True),
        ("I like a\u0308pfel", "ÄPFEL", True),  # decomposed umlaut
        ("Die Straße", "STRASSE", True),
        ("ΣΟΦΙΑ", "σοφια", True),
        ("uses Python 3.11", "python", True),
        ("uses Python 3.11", "  python  ", True),
        ("uses Python 3.11", "rust", False),
        ("I like apfel", "äpfel", False),
    ],
)
def test_recall_filter_is_unicode_case_insensitive(store: StateStore, stored: str, query: str, found: bool) -> None:
    store.remember("alice", "unrelated")
    store.remember("alice", stored)
    assert [m.text for m in store.recall("alice", query)] == ([stored] if found else [])


def test_empty_query_means_no_filter(store: StateStore) -> None:
    store.remember("alice", "one")
    store.remember("alice", "two")
    assert [m.text for m in store.recall("alice", "")] == ["two", "one"]
    assert [m.text for m in store.recall("alice", "   ")] == ["two", "one"]


@pytest.mark.parametrize(
    ("text", "fragment"),
    [("", "empty"), ("   \n ", "empty"), ("x" * (MEMORY_MAX_CHARS + 1), str(MEMORY_MAX_CHARS))],
)
def test_bad_memory_text_is_refused(store: StateStore, text: str, fragment: str) -> None:
    with pytest.raises(StateError) as caught:
        store.remember("alice", text)
    assert fragment in str(caught.value) and one_sentence(str(caught.value))
    assert store.recall("alice") == []


def test_forget_removes_only_that_memory(store: StateStore) -> None:
    keep = store.remember("alice", "keep")
    drop = store.remember("alice", "drop")
    assert store.forget("alice", drop) is True
    assert store.forget("alice", drop) is False
    assert store.forget("alice", "m-000000000000") is False
    assert [m.id for m in store.recall("alice")] == [keep]


# -- isolation -----------------------------------------------------------------


def test_another_user_never_sees_or_deletes_anything(store: StateStore) -> None:
    memory_id = store.remember("alice", "alice's secret plan")
    store.set_plan("alice", "c-shared", [{"step": "alice step", "status": "in_progress"}])
    store.append_exchange("alice", "c-shared", "run-a", "alice task", "alice answer")

    assert store.recall("bob") == []
    assert store.recall("bob", "alice") == []
    assert store.forget("bob", memory_id) is False
    assert store.get_plan("bob", "c-shared") == []
    assert store.history("bob", "c-shared") == []

    # Bob writing under the same conversation id does not touch Alice's data.
    store.set_plan("bob", "c-shared", [{"step": "bob step", "status": "pending"}])
    store.append_exchange("bob", "c-shared", "run-b", "bob task", "bob answer")
    assert [m.id for m in store.recall("alice")] == [memory_id]
    assert store.get_plan("alice", "c-shared")[0].step == "alice step"
    assert [m["content"] for m in store.history("alice", "c-shared")] == ["alice task", "alice answer"]
    assert [m["content"] for m in store.history("bob", "c-shared")] == ["bob task", "bob answer"]


@pytest.mark.parametrize("user", ["", "   "])
def test_empty_user_is_refused(store: StateStore, user: str) -> None:
    with pytest.raises(StateError, match="user id is empty"):
        store.remember(user, "x")


# -- plans ---------------------------------------------------------------------


def test_two_in_progress_steps_are_refused_with_both_named(store: StateStore) -> None:
    store.set_plan("alice", "c-1", [{"step": "old", "status": "pending"}])
    with pytest.raises(StateError) as caught:
        store.set_plan(
            "alice",
            "c-1",
            [
                {"step": "Write the parser", "status": "in_progress"},
                {"step": "Plan", "status": "completed"},
                {"step": "Run the tests", "status": "in_progress"},
            ],
        )
    message = str(caught.value)
    assert "'Write the parser'" in message and "'Run the tests'" in message and one_sentence(message)
    assert store.get_plan("alice", "c-1") == [PlanItem(step="old", status="pending")]


def test_a_valid_plan_is_stored_and_replaced_whole(store: StateStore) -> None:
    first = [
        {"step": "read", "status": "completed"},
        {"step": "write", "status": "in_progress"},
        {"step": "test", "status": "pending"},
    ]
    store.set_plan("alice", "c-1", first)
    assert [item.model_dump() for item in store.get_plan("alice", "c-1")] == first
    store.set_plan("alice", "c-1", [{"step": "  ship  ", "status": "pending"}])
    assert store.get_plan("alice", "c-1") == [PlanItem(step="ship", status="pending")]
    store.set_plan("alice", "c-1", [])
    assert store.get_plan("alice", "c-1") == []
    assert store.get_plan("alice", "c-other") == []


@pytest.mark.parametrize(
    "item",
    [
        {"step": "x", "status": "done"},
        {"step": "", "status": "pending"},
        {"step": "   ", "status": "pending"},
        {"step": "x", "status": "pending", "extra": 1},
        {"status": "pending"},
    ],
)
def test_invalid_plan_items_are_refused(store: StateStore, item: dict[str, object]) -> None:
    with pytest.raises(StateError) as caught:
        store.set_plan("alice", "c-1", [{"step": "fine", "status": "pending"}, item])
    assert "step 2" in str(caught.value) and one_sentence(str(caught.value))
    assert store.get_plan("alice", "c-1") == []


# -- conversations -------------------------------------------------------------


def test_history_is_oldest_first_and_limit_keeps_the_latest(store: StateStore) -> None:
    conversation = store.new_conversation_id()
    assert re.fullmatch(r"c-[0-9a-f]{12}", conversation)
    assert new_conversation_id() != conversation
    for n in range(3):
        store.append_exchange("alice", conversation, f"run-{n}", f"task {n}", f"answer {n}")
    store.append_exchange("alice", conversation, "run-3", "task 3", "")  # a run that ended without an answer
    contents = [m["content"] for m in store.history("alice", conversation)]
    assert contents == ["task 0", "answer 0", "task 1", "answer 1", "task 2", "answer 2", "task 3"]
    assert [m["role"] for m in store.history("alice", conversation)][:2] == ["user", "assistant"]
    assert [m["content"] for m in store.history("alice", conversation, limit=2)] == ["task 2", "answer 2", "task 3"]


# -- concurrency ---------------------------------------------------------------


def test_concurrent_threads_lose_no_rows(store: StateStore, db: Path) -> None:
    errors: list[BaseException] = []
    other = StateStore(db)  # a second connection in the same process, like a CLI run beside the server

    def writer(index: int) -> None:
        target = store if index % 2 else other
        try:
            for n in range(40):
                target.remember(f"user-{index}", f"note {n}")
                target.append_exchange(f"user-{index}", "c-1", "run", f"task {n}", f"answer {n}")
                target.recall(f"user-{index}", "note")
        except BaseException as exc:
            errors.append(exc)

    threads = [threading.Thread(target=writer, args=(index,)) for index in range(8)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=120)
    other.close()
    assert errors == []
    for index in range(8):
        assert len(store.recall(f"user-{index}", limit=100)) == 40
        assert len(store.history(f"user-{index}", "c-1")) == 80


@pytest.mark.e2e
def test_concurrent_processes_lose_no_rows(store: StateStore, db: Path) -> None:
    code = """
        import sys
        from pathlib import Path
        from k1412_ls.state.store import StateStore
        s = StateStore(Path(sys.argv[1]))
        name = sys.argv[2]
        print("ready", flush=True)
        sys.stdin.readline()  # start writing together with the others
        for n in range(200):
            s.remember(name, f"note {n}")
            s.set_plan(name, "c-1", [{"step": f"step {n}", "status": "in_progress"}])
        print("done")
    """
    children = [
        subprocess.Popen(
            [sys.executable, "-c", textwrap.dedent(code), str(db), f"proc-{n}"],
            stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
        )
        for n in range(2)
    ]
    for child in children:
        assert child.stdout is not None and child.stdout.readline().strip() == "ready"
    for child in children:
        assert child.stdin is not None
        child.stdin.write("go\n")
        child.stdin.flush()
    for n in range(200):  # the parent writes at the same time
        store.remember("parent", f"note {n}")
    results = [child.communicate(timeout=120) for child in children]
    for child, (out, err) in zip(children, results, strict=True):
        assert child.returncode == 0 and out.strip() == "done", err
    with sqlite3.connect(db) as conn:
        counts = dict(conn.execute("SELECT user, COUNT(*) FROM memories GROUP BY user").fetchall())
    assert counts == {"parent": 200, "proc-0": 200, "proc-1": 200}
    assert store.get_plan("proc-1", "c-1") == [PlanItem(step="step 199", status="in_progress")]


@pytest.mark.e2e
def test_two_processes_creating_a_fresh_file_at_once_both_succeed(tmp_path: Path) -> None:
    db = tmp_path / "fresh" / "k1412.sqlite3"
    code = """
        import sys
        from pathlib import Path
        from k1412_ls.state.store import StateStore
        StateStore(Path(sys.argv[1])).remember("u", sys.argv[2])
    """
    children = [
        subprocess.Popen([sys.executable, "-c", textwrap.dedent(code), str(db), f"from {n}"],
                         stderr=subprocess.PIPE, text=True)
        for n in range(3)
    ]
    for child in children:
        _, err = child.communicate(timeout=60)
        assert child.returncode == 0, err
    with StateStore(db) as store:
        assert sorted(m.text for m in store.recall("u")) == ["from 0", "from 1", "from 2"]


def test_an_opening_that_meets_sqlites_deadlock_avoidance_is_tried_again(tmp_path: Path,
                                                                        monkeypatch: pytest.MonkeyPatch) -> None:
    # SQLite answers "database is locked" at once, without waiting, when two fresh openers both switch the
    # file to WAL; the store tries the whole opening again instead of failing the process.
    real = StateStore._connect
    busy = [2]

    def meets_a_deadlock(self: StateStore) -> sqlite3.Connection:
        if busy[0]:
            busy[0] -= 1
            raise sqlite3.OperationalError("database is locked")
        return real(self)

    monkeypatch.setattr(StateStore, "_connect", meets_a_deadlock)
    with StateStore(tmp_path / "k.sqlite3") as store:
        store.remember("u", "kept")
        assert [m.text for m in store.recall("u")] == ["kept"] and busy == [0]


def test_an_opening_error_that_is_not_a_lock_is_one_sentence(tmp_path: Path) -> None:
    path = tmp_path / "k.sqlite3"
    path.write_bytes(b"not a database, but a text file " * 64)
    with pytest.raises(StateError, match=r"Cannot open the state database .*not a database"):
        StateStore(path)


# -- schema and opening --------------------------------------------------------


def test_wal_mode_and_schema_version_are_set(store: StateStore, db: Path) -> None:
    with sqlite3.connect(db) as conn:
        assert conn.execute("PRAGMA journal_mode").fetchone()[0] == "wal"
        assert schema_version(conn) == SCHEMA_VERSION == len(MIGRATIONS)


def test_the_database_files_are_private_to_the_owner(store: StateStore, db: Path) -> None:
    store.remember("alice", "private")
    for path in (db, db.with_name(db.name + "-wal")):
        assert path.stat().st_mode & 0o077 == 0, oct(path.stat().st_mode)
    assert db.parent.stat().st_mode & 0o077 == 0


def test_an_older_database_is_migrated_and_keeps_its_data(db: Path) -> None:
    db.parent.mkdir(parents=True)
    conn = sqlite3.connect(db, isolation_level=None)
    migrate(conn, target=1)
    conn.execute(
        "INSERT INTO memories (id, user, text, created_at) VALUES ('m-0123456789ab', 'alice', 'old', 'then')"
    )
    conn.close()
    with StateStore(db) as store:
        assert [(m.id, m.text) for m in store.recall("alice")] == [("m-0123456789ab", "old")]
        store.append_exchange("alice", "c-1", "run-1", "task", "answer")  # a table version 1 lacked
        assert len(store.history("alice", "c-1")) == 2
    with sqlite3.connect(db) as conn:
        assert schema_version(conn) == SCHEMA_VERSION


def test_a_newer_database_is_refused_in_one_sentence(db: Path) -> None:
    StateStore(db).close()
    with sqlite3.connect(db) as conn:
        conn.execute(f"PRAGMA user_version = {SCHEMA_VERSION + 5}")
    with pytest.raises(StateError) as caught:
        StateStore(db)
    message = str(caught.value)
    assert "newer K1412" in message and str(SCHEMA_VERSION + 5) in message and one_sentence(message)
    with sqlite3.connect(db) as conn:  # refused, not touched
        assert schema_version(conn) == SCHEMA_VERSION + 5


@pytest.mark.parametrize("case", ["garbage", "directory", "parent-is-file"])
def test_unusable_paths_fail_in_one_sentence(tmp_path: Path, case: str) -> None:
    if case == "garbage":
        path = tmp_path / "k1412.sqlite3"
        path.write_bytes(b"this is not a database at all, just text" * 100)
    elif case == "directory":
        path = tmp_path / "k1412.sqlite3"
        path.mkdir()
    else:
        (tmp_path / "blocker").write_text("a file")
        path = tmp_path / "blocker" / "k1412.sqlite3"
    with pytest.raises(StateError) as caught:
        StateStore(path)
    message = str(caught.value)
    assert "K1412_HOME" in message and one_sentence(message)


def test_using_a_closed_store_fails_in_one_sentence(db: Path) -> None:
    store = StateStore(db)
    store.close()
    for call in (lambda: store.remember("a", "x"), lambda: store.recall("a")):
        with pytest.raises(StateError) as caught:
            call()
        assert one_sentence(str(caught.value))


def test_open_default_uses_k1412_home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("K1412_HOME", str(tmp_path / "home"))
    with StateStore.open_default() as store:
        store.remember("alice", "x")
    assert (tmp_path / "home" / "k1412.sqlite3").is_file()
