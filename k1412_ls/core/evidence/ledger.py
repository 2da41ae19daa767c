"""The evidence ledger: what successful tool events of this run prove, and in which order.

The ledger reads only ``tool.completed`` events and their
``facts`` (``k1412_ls.tools.facts``), so a live run and a replay of its log
judge exactly the same thing. Events of every depth count: work a sub-agent
did is work done in this run. Order is the event ``seq``, never arrival
order, so a verification recorded before a write cannot prove it.

Facts are normalized into three kinds of entries:

- :class:`WriteEntry`: one changed path (create/update/delete/move), taken
  from every write fact, since write facts list only changes that were applied;
- :class:`LookEntry`: a read, listing, stat, search or git status/diff;
- :class:`RunEntry`: a command run or a background process poll.
"""

from __future__ import annotations

import threading
from dataclasses import dataclass, field
from typing import Any

from k1412_ls.core.events import Event
from k1412_ls.core.evidence.invocations import CommandShape, command_shape
from k1412_ls.core.evidence.line_outcomes import LineOutcome, line_outcome
from k1412_ls.text.runner_summaries import Tally, parse_summary


def normalize_path(path: str) -> str:
    """A comparable form of a workspace path: forward slashes, no ``./`` prefix or trailing slash."""
    text = path.replace("\\", "/").strip()
    while text.startswith("./"):
        text = text[2:]
    return text.rstrip("/") or "."


def same_path(a: str, b: str) -> bool:
    """Whether two paths name the same file: equal after normalisation (never by suffix)."""
    return normalize_path(a) == normalize_path(b)


def covers(listed: str, path: str) -> bool:
    """Whether a path reported by git (a file, or an untracked directory) covers ``path``."""
    listed, path = normalize_path(listed), normalize_path(path)
    return same_path(listed, path) or listed == "." or path.startswith(listed + "/")


@dataclass(frozen=True)
class WriteEntry:
    """A successful change to one path."""

    seq: int
    depth: int
    tool: str
    path: str
    action: str  # create | update | delete | move (``path`` is the destination)
    measurements: tuple[str, ...] = ()
    shebang: bool = False
    from_path: str | None = None
    by_command: bool = False
    binary: bool = False
    numbers: tuple[str, ...] = ()
    units: tuple[tuple[str, tuple[str, ...]], ...] = ()
    imports: tuple[str, ...] = ()

    @property
    def removes(self) -> bool:
        return self.action == "delete"


@dataclass(frozen=True)
class IntegrityEntry:
    """What a change did to one test file, as of event ``seq`` (``core.evidence.test_integrity``)."""

    seq: int
    depth: int
    path: str
    change: str  # intact | added | created | weakened | removed | unknown
    why: str = ""
    how: str = ""  # for weakened: changed | removed | skipped | hooked

    @property
    def voids_proof(self) -> bool:
        return self.change in ("weakened", "removed", "unknown")


@dataclass(frozen=True)
class LookEntry:
    """A successful read, listing, stat, search or git status/diff."""

    seq: int
    depth: int
    tool: str
    kind: str  # read | inspect | git
    paths: tuple[str, ...]
    whole_tree: bool  # a git status/diff of the whole repository (no path filter)
    numbers: tuple[str, ...] = ()  # numbers in the content read


@dataclass(frozen=True)
class CommitFact:
    """HEAD of the workspace's repository moved during a command (``tools.git_head``)."""

    files: tuple[str, ...] | None  # paths the new commits changed (None: git could not tell)
    file_count: int | None
    descends: bool  # the new HEAD descends from the old one (new commits, not a reset or checkout)
    dirty_after: int | None  # paths still uncommitted after the command

    @property
    def new_work(self) -> bool:
        """New, non-empty commits on top of what HEAD was."""
        return self.descends and bool(self.file_count)


def _commit_fact(raw: Any) -> CommitFact | None:
    if not isinstance(raw, dict) or not raw.get("head_after") or raw.get("error"):
        return None
    files = raw.get("files")
    count = raw.get("file_count")
    dirty = raw.get("dirty_after")
    return CommitFact(tuple(normalize_path(f) for f in files if isinstance(f, str)) if isinstance(files, list) else None,
                      count if isinstance(count, int) else None, bool(raw.get("descends")),
                      dirty if isinstance(dirty, int) else None)


@dataclass(frozen=True)
class RunEntry:
    """A command run (``exec``) or a background process observation (``process``)."""

    seq: int
    depth: int
    tool: str
    shape: CommandShape
    exit_code: int | None
    succeeded: bool
    failed: bool  # exited non-zero, timed out or was cancelled; a running process is neither
    numbers: frozenset[str]
    source: str  # exec | process
    process_id: str | None = None
    outcome: LineOutcome = field(default_factory=LineOutcome)
    cwd: str = "."
    units: tuple[tuple[str, tuple[str, ...]], ...] = ()
    printed: bool = True  # the command printed something (a read that printed nothing showed no content)
    commit: CommitFact | None = None  # HEAD of the workspace's repository moved during the command
    output: str = ""  # the excerpt of what it printed (as the event holds it)

    @property
    def proves_run(self) -> bool:
        """A program that runs code exited 0, and no test or build in the line failed."""
        if self.source == "process":
            return self.succeeded
        o = self.outcome
        return o.executed and not any(t.outcome == "fail" for t in o.tests) \
            and not any(b.ok is False for b in o.builds) and not o.failed_programs

    @property
    def command(self) -> str:
        return self.shape.command

    def describe(self) -> str:
        """```cmd` (exit 1)`` for messages."""
        if self.exit_code is None:
            how = "was stopped before it exited"
        else:
            how = f"exit {self.exit_code}"
        return f"`{self.command}` ({how})"


@dataclass
class EvidenceLedger:
    """Collects the evidence of one run from its events; feed it with :meth:`record`.

    ``agent_id`` scopes the ledger to one sub-agent's own events (a sub-agent's
    gate judges its own work); ``None`` takes every depth of the run.
    """

    agent_id: str | None = None
    writes: list[WriteEntry] = field(default_factory=list)
    looks: list[LookEntry] = field(default_factory=list)
    runs: list[RunEntry] = field(default_factory=list)
    # Paths whose only writes were skipped as identical (the file already had that content).
    skipped: list[str] = field(default_factory=list)
    integrity: list[IntegrityEntry] = field(default_factory=list)
    task: str | None = None
    _seen: set[int] = field(default_factory=set)
    _lock: threading.Lock = field(default_factory=threading.Lock)

    def record(self, event: Event) -> None:
        """Take in one event; events that prove nothing are ignored, duplicates too."""
        if event.type == "run.created" and event.depth == 0 and isinstance(event.payload.get("task"), str):
            self.task = event.payload["task"]
            return
        if event.type != "tool.completed":
            return
        if self.agent_id is not None and event.agent_id != self.agent_id:
            return
        payload = event.payload
        facts = payload.get("facts")
        if not isinstance(facts, dict):
            return
        with self._lock:
            if event.seq in self._seen:
                return
            self._seen.add(event.seq)
            self._take(event, str(payload.get("tool", "")), bool(payload.get("ok")), facts,
                       payload.get("args") if isinstance(payload.get("args"), dict) else {})

    def _take(self, event: Event, tool: str, ok: bool, facts: dict[str, Any], args: dict[str, Any]) -> None:
        kind = facts.get("kind")
        seq, depth = event.seq, event.depth
        for raw in facts.get("test_integrity") or []:
            if isinstance(raw, dict) and isinstance(raw.get("path"), str) and isinstance(raw.get("change"), str):
                self.integrity.append(IntegrityEntry(seq, depth, normalize_path(raw["path"]), raw["change"],
                                                     str(raw.get("why") or ""), str(raw.get("how") or "")))
        if kind == "write":
            # Write facts list only changes that were applied; a patch that failed half way
            # (ok false) still changed the files it lists, and those need verifying too.
            self._take_writes(seq, depth, tool, facts)
        elif kind in ("read", "inspect") and ok:
            paths = tuple(normalize_path(p) for p in facts.get("paths") or [] if isinstance(p, str))
            self.looks.append(LookEntry(seq, depth, tool, kind, paths, False, _strings(facts.get("numbers"))))
        elif kind == "git" and ok:
            paths = tuple(normalize_path(p) for p in facts.get("paths") or [] if isinstance(p, str))
            whole = "paths" not in facts and not args.get("path")
            self.looks.append(LookEntry(seq, depth, tool, "git", paths, whole))
        elif kind == "exec":
            self._take_run(seq, depth, tool, facts, "exec")
            if isinstance(facts.get("changes"), list):
                self._take_writes(seq, depth, tool, {"writes": facts["changes"]})
        elif kind == "process":
            self._take_run(seq, depth, tool, facts, "process")
        elif kind == "mcp":
            # An MCP server's answer is a read of what it returned (its numbers, no path of ours), never a test
            # run, a build or a commit; what it changed in the workspace is a write like a command's.
            if ok:
                self.looks.append(LookEntry(seq, depth, tool, "read", (), False, _strings(facts.get("numbers"))))
            if isinstance(facts.get("changes"), list):
                self._take_writes(seq, depth, tool, {"writes": facts["changes"]})

    def _take_writes(self, seq: int, depth: int, tool: str, facts: dict[str, Any]) -> None:
        unchanged = bool(facts.get("unchanged"))
        for raw in facts.get("writes") or []:
            if not isinstance(raw, dict) or not isinstance(raw.get("path"), str):
                continue
            path = normalize_path(raw["path"])
            if unchanged:
                # An identical write proves nothing new: the path counts only through an
                # earlier successful write of this run, which is already in the ledger.
                if path not in self.skipped:
                    self.skipped.append(path)
                continue
            action = str(raw.get("action") or "update")
            measurements = raw.get("measurements")
            if not isinstance(measurements, list):
                # Older facts carry only ``numbers``: keep those with a decimal point.
                measurements = [n for n in raw.get("numbers") or [] if isinstance(n, str) and "." in n]
            origin = raw.get("from")
            self.writes.append(WriteEntry(seq, depth, tool, path, action, tuple(map(str, measurements)),
                                          bool(raw.get("shebang")),
                                          normalize_path(origin) if isinstance(origin, str) else None,
                                          raw.get("by") == "command", bool(raw.get("binary")),
                                          _strings(raw.get("numbers")), _units(raw.get("units")),
                                          _strings(raw.get("imports"))))

    def _take_run(self, seq: int, depth: int, tool: str, facts: dict[str, Any], source: str) -> None:
        command = facts.get("command")
        if not isinstance(command, str):
            return
        exit_code = facts.get("exit_code")
        exit_code = exit_code if isinstance(exit_code, int) else None
        status = facts.get("status")
        stopped = bool(facts.get("timed_out")) or bool(facts.get("cancelled"))
        if source == "process":
            if facts.get("op") == "cancel" or status == "killed":
                return  # stopping a background process on purpose proves nothing either way
            if status == "running":
                succeeded, failed = facts.get("op") == "poll", False
            else:
                succeeded = status == "exited" and exit_code == 0
                failed = status == "exited" and exit_code != 0
        else:
            succeeded = exit_code == 0 and not stopped
            failed = not succeeded
        numbers = frozenset(str(n) for n in facts.get("numbers") or [])
        process_id = facts.get("process_id") if isinstance(facts.get("process_id"), str) else None
        shape = command_shape(command)
        outcome = LineOutcome()
        cwd = facts.get("cwd") if isinstance(facts.get("cwd"), str) else "."
        output = facts.get("output") if isinstance(facts.get("output"), str) else ""
        if source == "exec":
            observed = facts.get("observed") if isinstance(facts.get("observed"), list) else []
            outcome = line_outcome(shape, exit_code, stopped, observed, _tally(facts), output, normalize_path(cwd))
        elif status == "exited" and facts.get("op") == "poll":
            # A background command that ended: judge it like a line whose exit code is known.
            observed = facts.get("observed") if isinstance(facts.get("observed"), list) else []
            outcome = line_outcome(shape, exit_code, False, observed, _tally(facts), output, normalize_path(cwd))
        self.runs.append(RunEntry(seq, depth, tool, shape, exit_code, succeeded, failed, numbers,
                                  source, process_id, outcome, normalize_path(cwd), _units(facts.get("units")),
                                  printed=bool(output.strip()), commit=_commit_fact(facts.get("git_commit")),
                                  output=output))

    def integrity_snapshot(self) -> list[IntegrityEntry]:
        """The test integrity findings in ``seq`` order."""
        with self._lock:
            return sorted(self.integrity, key=lambda e: e.seq)

    def snapshot(self) -> tuple[list[WriteEntry], list[LookEntry], list[RunEntry]]:
        """The entries sorted by ``seq`` (a consistent copy, safe while events keep arriving)."""
        with self._lock:
            return (sorted(self.writes, key=lambda e: e.seq), sorted(self.looks, key=lambda e: e.seq),
                    sorted(self.runs, key=lambda e: e.seq))


@dataclass(frozen=True)
class FileState:
    """The final state of one path written in this run."""

    path: str
    last: WriteEntry  # the last change to it (its content and its time)

    @property
    def present(self) -> bool:
        return not self.last.removes


def written_files(writes: list[WriteEntry]) -> dict[str, FileState]:
    """Final state per path: the last change wins; a move removes its origin."""
    states: dict[str, FileState] = {}
    for entry in writes:
        if entry.action == "move" and entry.from_path:
            origin = WriteEntry(entry.seq, entry.depth, entry.tool, entry.from_path, "delete")
            states[entry.from_path] = FileState(entry.from_path, origin)
        states[entry.path] = FileState(entry.path, entry)
    return states


def _tally(facts: dict[str, Any]) -> Tally:
    """The test summary of an exec fact (recomputed from the excerpt for logs that predate it)."""
    raw = facts.get("tests")
    if isinstance(raw, dict):
        try:
            return Tally(**{k: raw[k] for k in ("found", "passed", "failed", "errors", "skipped", "filtered")})
        except (KeyError, TypeError):
            pass
    output = facts.get("output")
    return parse_summary(output) if isinstance(output, str) else Tally()


def _strings(value: Any) -> tuple[str, ...]:
    return tuple(str(v) for v in value) if isinstance(value, list) else ()


def _units(value: Any) -> tuple[tuple[str, tuple[str, ...]], ...]:
    """``{"0.213": ["ms"]}`` as a hashable tuple."""
    if not isinstance(value, dict):
        return ()
    return tuple((str(k), tuple(str(u) for u in v)) for k, v in value.items() if isinstance(v, list))
