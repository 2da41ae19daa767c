"""The process-count cap: a pids cgroup where one can be made, else a watchdog; both hold for root.

Each case forks up to 200 sleepers under a cap of 24 and checks how many
ever ran at once; the positive control runs the same forker with a cap of
1000 and sees all 200 (so the cap, not the forker, made the difference).
"""

from __future__ import annotations

import os
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from k1412_ls.tools.processes.child_processes import run_to_end
from k1412_ls.tools.sandbox import process_cap
from k1412_ls.tools.sandbox.command_sandbox import RunSandbox, SandboxPolicy, bubblewrap

FORKER = """
import os, signal, sys, time
children = []
for _ in range(200):
    try:
        pid = os.fork()
    except OSError:
        break
    if pid == 0:
        time.sleep(20)
        os._exit(0)
    children.append(pid)
    time.sleep(0.002)  # slow enough for the watchdog to see the tree grow
print(f"started={len(children)}", flush=True)
for pid in children:
    os.kill(pid, signal.SIGKILL)
"""

needs_sandbox = pytest.mark.skipif(not bubblewrap().active, reason="bubblewrap is not usable here")


@pytest.fixture
def no_cgroup(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    monkeypatch.setattr(process_cap, "cgroup_parent", lambda: None)
    yield


def _started(tmp_path: Path, limit: int) -> tuple[int | None, str]:
    sandbox = RunSandbox(SandboxPolicy(max_processes=limit))
    try:
        done = run_to_end([sys.executable, "-c", FORKER], tmp_path, {"PATH": "/usr/bin:/bin"}, timeout_s=60,
                          sandbox=sandbox, workspace=tmp_path)
    finally:
        sandbox.close()
    if "started=" not in done.output:
        return None, done.output
    return int(done.output.split("started=")[1].split()[0]), done.output


@pytest.mark.e2e
@needs_sandbox
def test_the_cgroup_caps_processes(tmp_path: Path) -> None:
    if process_cap.cgroup_parent() is None:
        pytest.skip("no pids cgroup can be made here; the watchdog case covers this machine")
    started, output = _started(tmp_path, 24)
    assert started is not None and started < 24, output
    control, _ = _started(tmp_path, 1000)
    assert control == 200


@pytest.mark.e2e
@needs_sandbox
@pytest.mark.usefixtures("no_cgroup")
def test_the_watchdog_kills_a_tree_past_the_cap(tmp_path: Path) -> None:
    started, output = _started(tmp_path, 24)
    # The watchdog kills the whole tree once it passes the cap: the forker never gets to print.
    assert started is None, output
    control, control_output = _started(tmp_path, 1000)
    assert control == 200, control_output


def test_descendants_sees_a_whole_tree(tmp_path: Path) -> None:
    import subprocess

    parent = subprocess.Popen(["bash", "-c", "sleep 5 & sleep 5 & (sleep 5 &); wait"])
    try:
        import time

        deadline = time.monotonic() + 5
        while len(process_cap.descendants(parent.pid)) < 2 and time.monotonic() < deadline:
            time.sleep(0.02)
        assert len(process_cap.descendants(parent.pid)) >= 2
    finally:
        parent.kill()
        parent.wait()


# --- kernel interfaces that check only the host uid ----------------------------------------------------------

OPEN_FOR_WRITE = """
import os
for path in ("/proc/sys/net/ipv4/ip_forward", "/proc/sys/kernel/core_pattern"):
    try:
        os.close(os.open(path, os.O_WRONLY))  # opening writes nothing; it shows whether a write would be allowed
        print("WRITABLE", path)
    except OSError as exc:
        print("refused", path, exc.strerror)
"""


@needs_sandbox
def test_kernel_settings_under_proc_sys_are_read_only(tmp_path: Path) -> None:
    import os
    import subprocess

    from k1412_ls.tools.sandbox.command_sandbox import BASE_FLAGS, NETWORK_OFF_FLAGS

    sandbox = RunSandbox(SandboxPolicy())
    try:
        done = run_to_end([sys.executable, "-c", OPEN_FOR_WRITE], tmp_path, {"PATH": "/usr/bin:/bin"},
                          timeout_s=30, sandbox=sandbox, workspace=tmp_path)
    finally:
        sandbox.close()
    assert "refused /proc/sys/kernel/core_pattern" in done.output and "WRITABLE" not in done.output
    if os.geteuid() != 0:
        return  # the positive control below is about root, whose uid the kernel checks
    # Positive control: the same sandbox without the read-only /proc entries lets root open them for writing.
    bwrap = bubblewrap().path
    assert bwrap is not None
    bare = subprocess.run([bwrap, *BASE_FLAGS, *NETWORK_OFF_FLAGS, "--", sys.executable, "-c", OPEN_FOR_WRITE],
                          capture_output=True, text=True, check=False)
    assert "WRITABLE /proc/sys/kernel/core_pattern" in bare.stdout, bare.stdout + bare.stderr


def _watchers() -> list[str]:
    import threading

    return [t.name for t in threading.enumerate() if t.name.startswith("k1412-pidcap-") and t.is_alive()]


def test_a_cap_closed_before_its_watch_begins_starts_no_watcher() -> None:
    # The race a fast command runs: its output drain reaps it and closes the cap before spawn() calls start().
    cap = process_cap.ProcessCap(8)
    cap.close()
    cap.start(os.getpid(), on_trip=lambda: None)
    assert cap._watch_thread is None
    opened = process_cap.ProcessCap(8)  # positive control: an open cap does start its watcher
    opened.start(os.getpid(), on_trip=lambda: None)
    try:
        assert opened._watch_thread is not None and opened._watch_thread.is_alive()
    finally:
        opened.close()
        opened._watch_thread.join(5)
    assert not opened._watch_thread.is_alive()


def test_many_fast_commands_leave_no_watcher_threads(tmp_path: Path) -> None:
    # Unsandboxed commands (git tools) are counted by the watchdog; each must end with its command.
    before = set(_watchers())
    for _ in range(40):
        done = run_to_end(["true"], tmp_path, {"PATH": os.environ.get("PATH", "/usr/bin:/bin")}, timeout_s=10)
        assert done.exit_code == 0
    deadline = time.monotonic() + 5
    while set(_watchers()) - before and time.monotonic() < deadline:
        time.sleep(0.05)
    assert not set(_watchers()) - before
