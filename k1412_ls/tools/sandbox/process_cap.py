"""A cap on how many processes one command may run, that holds for root too.

``RLIMIT_NPROC`` is ignored for root, and a fork bomb run as root would take
the machine. So each command gets a pids cgroup of its own when the machine
lets K1412 make one (cgroup v2, or the v1 ``pids`` hierarchy), entered by the
command's trusted ``/bin/sh`` launcher itself (it writes ``0``, "myself") before
it execs the sandbox, so that no child is born outside it. When no cgroup can be made, a watchdog counts the command's
descendants every :data:`WATCH_INTERVAL_S` and kills the whole tree once it
passes the cap. The cgroup also finds every survivor when the command ends.
"""

from __future__ import annotations

import logging
import os
import signal
import threading
import time
import uuid
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

log = logging.getLogger(__name__)

WATCH_INTERVAL_S = 0.05
_CGROUP_ROOTS = (Path("/sys/fs/cgroup"), Path("/sys/fs/cgroup/pids"))


def _usable_cgroup_parent() -> Path | None:
    """A directory under which K1412 may create pids cgroups, or None."""
    for root in _CGROUP_ROOTS:
        controllers = root / "cgroup.controllers"
        if root.name == "cgroup" and not (controllers.is_file() and "pids" in controllers.read_text().split()):
            continue
        if not (root / "cgroup.procs").is_file():
            continue
        probe = root / f"k1412-probe-{uuid.uuid4().hex[:8]}"
        try:
            probe.mkdir()
        except OSError:
            continue
        try:
            ok = (probe / "pids.max").is_file()
        finally:
            try:
                probe.rmdir()
            except OSError:
                pass
        if ok:
            return root
    return None


_parent_lock = threading.Lock()
_parent: list[Path | None] = []


def cgroup_parent() -> Path | None:
    """Probe once per process where pids cgroups can be made."""
    with _parent_lock:
        if not _parent:
            _parent.append(_usable_cgroup_parent())
        return _parent[0]


def _pids_in(group: Path) -> list[int]:
    try:
        text = (group / "cgroup.procs").read_text()
    except OSError:
        return []
    return [int(line) for line in text.split()]


@dataclass
class ProcessCap:
    """One command's cap: wrap its argv before spawning, ``start`` after, ``close`` when it ended."""

    limit: int
    group: Path | None = None
    _watch_stop: threading.Event | None = None
    _watch_thread: threading.Thread | None = None
    tripped: bool = False
    _closed: bool = False
    _lock: threading.Lock = field(default_factory=threading.Lock)

    def prepare(self) -> str | None:
        """Make the command's pids cgroup; the file its launcher writes ``0`` ("myself") to, or None.

        On the v1 hierarchy that is ``tasks``: a thread moving *itself* through
        ``tasks`` is the one migration the kernel makes without taking its global
        ``cgroup_threadgroup_rwsem`` for writing, which waits out an RCU grace
        period (10-15 ms a command here). The launcher is one single-threaded
        ``sh``, so moving its thread moves all of it, and everything it starts is
        born inside. On cgroup v2 (no ``tasks`` file) it is ``cgroup.procs``.
        """
        parent = cgroup_parent()
        if parent is None:
            return None
        group = parent / f"k1412-{os.getpid()}-{uuid.uuid4().hex[:12]}"
        try:
            group.mkdir()
            (group / "pids.max").write_text(str(self.limit))
        except OSError as exc:
            log.warning("could not create a pids cgroup (%s); using the watchdog", exc)
            self._remove(group)
            return None
        self.group = group
        tasks = group / "tasks"
        return str(tasks if tasks.is_file() else group / "cgroup.procs")

    def abandon(self) -> None:
        """Give up the cgroup before anything entered it (the watchdog takes over)."""
        if self.group is not None:
            self._remove(self.group)
            self.group = None

    def start(self, pid: int, on_trip: Callable[[], None]) -> None:
        """Begin watching the process tree of ``pid`` when no cgroup holds it."""
        if self.group is not None:
            return
        with self._lock:
            if self._closed:  # the command ended (and was reaped) before the watch began: nothing to watch
                return
            stop = threading.Event()
            self._watch_stop = stop
            self._watch_thread = threading.Thread(target=self._watch, args=(pid, stop, on_trip),
                                                  name=f"k1412-pidcap-{pid}", daemon=True)
            self._watch_thread.start()

    def _watch(self, pid: int, stop: threading.Event, on_trip: Callable[[], None]) -> None:
        while not stop.wait(WATCH_INTERVAL_S):
            count = len(descendants(pid))
            if count > self.limit:
                self.tripped = True
                log.warning("command %d ran %d processes (cap %d); killing it", pid, count, self.limit)
                on_trip()
                for child in descendants(pid):
                    _kill(child)
                return

    def kill_all(self) -> None:
        """SIGKILL every process still in the cgroup (survivors that left the process group).

        Safe from any thread, also while :meth:`close` removes the cgroup (it then finds nothing).
        """
        group = self.group
        if group is None:
            return
        kill_file = group / "cgroup.kill"
        if kill_file.is_file():
            try:
                kill_file.write_text("1")
            except OSError:
                pass
        deadline = time.monotonic() + 5.0
        while time.monotonic() < deadline:
            pids = _pids_in(group)
            if not pids:
                return
            for pid in pids:
                _kill(pid)
            time.sleep(0.001)
        log.warning("processes survived in %s after 5 s of SIGKILL", group)

    def exhausted(self) -> bool:
        """True when the command hit the cap (fork refused by the cgroup, or the watchdog fired)."""
        if self.tripped:
            return True
        if self.group is None:
            return False
        try:
            events = (self.group / "pids.events").read_text()
        except OSError:
            return False
        return any(line.split()[-1] != "0" for line in events.splitlines() if line.startswith("max"))

    def close(self) -> None:
        with self._lock:
            self._closed = True
            if self._watch_stop is not None:
                self._watch_stop.set()
        if self.group is not None:
            self.tripped = self.exhausted()
            self.kill_all()
            self._remove(self.group)
            self.group = None

    @staticmethod
    def _remove(group: Path) -> None:
        for attempt in range(200):
            try:
                group.rmdir()
                return
            except FileNotFoundError:
                return
            except OSError:
                time.sleep(0.001 if attempt < 100 else 0.02)
        log.warning("could not remove cgroup %s", group)


def _kill(pid: int) -> None:
    try:
        os.kill(pid, signal.SIGKILL)
    except (ProcessLookupError, PermissionError):
        pass


def descendants(pid: int) -> list[int]:
    """Every live process below ``pid`` (orphans in a PID namespace stay below its init)."""
    children: dict[int, list[int]] = {}
    with os.scandir("/proc") as entries:
        for entry in entries:
            if not entry.name.isdigit():
                continue
            try:
                with open(f"/proc/{entry.name}/stat", "rb") as handle:
                    stat = handle.read()
            except OSError:
                continue
            # The command name may contain spaces and parentheses: the fields start after the last ')'.
            fields = stat[stat.rfind(b")") + 2:].split()
            if len(fields) > 1:
                children.setdefault(int(fields[1]), []).append(int(entry.name))
    found: list[int] = []
    stack = [pid]
    while stack:
        for child in children.get(stack.pop(), []):
            found.append(child)
            stack.append(child)
    return found


__all__ = ["ProcessCap", "cgroup_parent", "descendants"]
