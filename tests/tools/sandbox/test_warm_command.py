"""The next command's sandbox, started when the last one ended (``k1412_ls/tools/sandbox/warm_command.py``).

A command takes it only when its confinement would be exactly the same as in a fresh sandbox, and
then runs exactly as it would have there: these tests compare the two views, replace covered paths
and change the plan between commands (each with a control showing the attack works when the check
is taken away), and check that nothing of a kept sandbox outlives the run.
"""

from __future__ import annotations

import os
import re
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from k1412_ls.tools.files.documents import DiskDocumentStore
from k1412_ls.tools.files.workspace import Workspace
from k1412_ls.tools.ports import RunServices
from k1412_ls.tools.processes.run_command import TOOLS
from k1412_ls.tools.registry import ToolContext, ToolRegistry, ToolResult
from k1412_ls.tools.sandbox import warm_command
from k1412_ls.tools.sandbox.command_sandbox import RunSandbox, SandboxPolicy, bubblewrap
from k1412_ls.tools.sandbox.warm_command import WarmSandbox
from k1412_ls.tools.undo.changes import RunChanges

pytestmark = pytest.mark.skipif(not bubblewrap().active, reason="needs bubblewrap")

REGISTRY = ToolRegistry(TOOLS)


class Run:
    """One run's command tools: a workspace, its sandbox and change tracker."""

    def __init__(self, ws: Path, policy: SandboxPolicy | None = None) -> None:
        self.ws = ws
        self.sandbox = RunSandbox(policy)
        self.changes = RunChanges(ws)
        self.ctx = ToolContext(workspace=Workspace(ws), documents=DiskDocumentStore(ws),
                               services=RunServices(sandbox=self.sandbox, changes=self.changes))

    def run(self, command: str, **args: Any) -> ToolResult:
        return REGISTRY.execute("run_command", {"command": command, **args}, self.ctx)

    def wait_kept(self, timeout: float = 20.0) -> None:
        """Until the sandbox started for the next command is ready."""
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            warm = self.sandbox.take_warm()
            if warm is not None:
                ready = isinstance(warm, WarmSandbox) and warm.ready()
                if not self.sandbox.keep_warm(warm):
                    warm.discard()
                if ready:
                    return
            time.sleep(0.01)
        raise AssertionError("no sandbox was started ahead for the next command")

    def drop_kept(self) -> None:
        warm = self.sandbox.take_warm()
        if warm is not None:
            warm.discard()

    def close(self) -> None:
        self.changes.close()
        self.sandbox.close()


@pytest.fixture
def run(tmp_path: Path) -> Iterator[Run]:
    ws = tmp_path / "ws"
    (ws / "sub").mkdir(parents=True)
    session = Run(ws)
    try:
        yield session
    finally:
        session.close()


# What a command can see of its confinement: mounts, namespaces, identity, limits, filters, descriptors.
PROBE = r"""
echo "cwd=$(pwd) tmp=$TMPDIR"
awk '{print $5, $6, $9, $(NF)}' /proc/self/mountinfo | sed 's/,\?relatime//' | sort
grep -E '^(CapEff|CapBnd|NoNewPrivs|Seccomp|Seccomp_filters):' /proc/self/status
# What confinement decides about processes: an own PID namespace showing no host process. The exact count
# depends on which helpers happen to be alive at that moment (load), so it is not compared.
n=$(ls /proc | grep -c '^[0-9]'); [ "$n" -lt 20 ] && own=yes || own="no ($n)"
echo "uid=$(id -u) host=$(hostname) own_pid_namespace=$own"
ulimit -a
cat /proc/net/dev | tail -n +3 | awk '{print $1}'
for v in $(compgen -e | sort); do case $v in _|SHLVL|PWD|OLDPWD) ;; *) printf '%s=%q\n' "$v" "${!v}";; esac; done
ls /proc/self/fd | sort -n | awk '$1 < 100'
"""


def _probe(run: Run, cwd: str | None = None) -> str:
    result = run.run(PROBE, **({"cwd": cwd} if cwd else {}))
    assert result.ok, result.data
    return re.sub(r"k1412-run-tmp-\w+", "RUNTMP", str(result.data["output"]))


def test_a_command_after_another_runs_in_the_sandbox_started_for_it(run: Run) -> None:
    first = run.run("echo one; exit 3")
    run.wait_kept()
    second = run.run("echo two; exit 5")
    assert (first.data["exit_code"], first.data["output"]) == (3, "one\n")
    assert (second.data["exit_code"], second.data["output"]) == (5, "two\n")
    assert run.sandbox.warm_served == 1
    assert second.data["duration_ms"] < 5000


def test_it_confines_exactly_as_a_fresh_sandbox(run: Run) -> None:
    run.run("true")
    run.drop_kept()
    fresh = _probe(run)
    run.wait_kept()
    served = run.sandbox.warm_served
    kept = _probe(run)
    assert run.sandbox.warm_served == served + 1
    assert kept == fresh
    run.drop_kept()
    fresh_sub = _probe(run, "sub")
    run.wait_kept()
    kept_sub = _probe(run, "sub")  # another working directory: the same sandbox, changed into
    assert run.sandbox.warm_served == served + 2
    assert kept_sub == fresh_sub and "cwd=" + str(run.ws / "sub") in kept_sub


def test_a_cover_replaced_on_the_host_sends_the_command_to_a_fresh_sandbox(tmp_path: Path,
                                                                         monkeypatch: pytest.MonkeyPatch) -> None:
    ws = tmp_path / "ws"
    ws.mkdir()
    secret = ws / "secrets"  # inside the workspace: the rest of the host's /tmp is not the command's /tmp
    secret.mkdir()
    for check in (True, False):  # False: the control, the stage told of no cover to check
        if not check:
            monkeypatch.setattr(warm_command, "_checks", lambda flags: {"tmpfs": [], "null": []})
        session = Run(ws, SandboxPolicy(hidden=(str(secret),)))
        try:
            assert session.run(f"ls -A {secret}").data["output"] == ""  # hidden: an empty directory
            session.wait_kept()
            # On the host the covered directory is renamed away and made again with a secret in it: in the
            # kept sandbox's namespace the cover stays on the old directory, the path shows the new one.
            secret.rename(ws / f"secrets-old-{check}")
            secret.mkdir()
            (secret / "key").write_text("TOPSECRET\n")
            result = session.run(f"cat {secret}/key")
            served = session.sandbox.warm_served
        finally:
            session.close()
            (secret / "key").unlink()
        if check:
            assert "TOPSECRET" not in str(result.data["output"]) and result.data["exit_code"] != 0
            assert served == 0  # it went to a fresh sandbox, which covers the new directory
        else:
            assert "TOPSECRET" in str(result.data["output"]) and served == 1


def test_a_plan_that_changed_between_commands_is_never_served_by_the_kept_sandbox(
        run: Run, monkeypatch: pytest.MonkeyPatch) -> None:
    run.run("true")
    run.wait_kept()
    (run.ws / ".git").mkdir()  # made on the host after the kept sandbox started: commands must find it read-only
    result = run.run("touch .git/planted && echo wrote")
    assert result.data["exit_code"] != 0 and not (run.ws / ".git" / "planted").exists()
    assert run.sandbox.warm_served == 0
    # Control: a kept sandbox that skipped the comparison would have let the command write .git.
    run.wait_kept()
    (run.ws / ".git").rmdir()
    run.drop_kept()
    run.run("true")
    run.wait_kept()
    (run.ws / ".git").mkdir()
    monkeypatch.setattr(WarmSandbox, "fits", lambda self, planned, root: True)
    leaked = run.run("touch .git/planted && echo wrote")
    assert leaked.data["output"] == "wrote\n" and (run.ws / ".git" / "planted").exists()
    assert run.sandbox.warm_served == 1


def test_commands_back_to_back_never_wait_for_a_sandbox_still_starting(run: Run) -> None:
    outputs = [run.run(f"echo {i}; exit {i % 7}") for i in range(12)]
    for i, result in enumerate(outputs):
        assert (result.data["output"], result.data["exit_code"]) == (f"{i}\n", i % 7)
    run.wait_kept()
    assert run.run("echo last").data["output"] == "last\n"
    assert run.sandbox.warm_served >= 1


def test_each_result_is_its_own_command_s(run: Run) -> None:
    for i in range(15):
        if i % 2:
            run.wait_kept()
        marker = f"marker-{i}-{os.urandom(4).hex()}"
        result = run.run(f"echo {marker}; echo err-{i} >&2; exit {i % 5}")
        assert result.data["output"] == f"{marker}\nerr-{i}\n" and result.data["exit_code"] == i % 5
    assert run.sandbox.warm_served >= 7


def test_a_timeout_in_a_kept_sandbox_kills_everything_it_started(run: Run) -> None:
    run.run("true")
    run.wait_kept()
    started = time.monotonic()
    result = run.run("(sleep 60 &) ; setsid sleep 60 & sleep 60", timeout_s=1)
    assert result.data.get("timed_out") and time.monotonic() - started < 10
    assert run.sandbox.warm_served == 1
    assert not _processes_matching("sleep 60")


def _processes_matching(text: str) -> list[int]:
    found = []
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                cmdline = Path(f"/proc/{entry}/cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace")
            except OSError:
                continue
            if text in cmdline:
                found.append(int(entry))
    return found


def test_the_run_end_ends_an_unused_kept_sandbox(tmp_path: Path) -> None:
    ws = tmp_path / "ws"
    ws.mkdir()
    before = set(_processes_matching("command_stage.py"))  # other tests' runs may still hold theirs
    session = Run(ws)
    session.run("true")
    session.wait_kept()
    stages = [pid for pid in _processes_matching("command_stage.py") if _child_of_us(pid) and pid not in before]
    assert stages  # control: the kept sandbox's stage is alive while the run goes on
    session.close()
    deadline = time.monotonic() + 5
    while any(Path(f"/proc/{pid}").exists() for pid in stages) and time.monotonic() < deadline:
        time.sleep(0.02)
    assert not [pid for pid in stages if Path(f"/proc/{pid}").exists()]
    assert session.sandbox.take_warm() is None


def _child_of_us(pid: int) -> bool:
    """Whether ``pid`` descends from this test process."""
    while pid > 1:
        try:
            stat = Path(f"/proc/{pid}/stat").read_text()
        except OSError:
            return False
        pid = int(stat[stat.rfind(")") + 2:].split()[1])
        if pid == os.getpid():
            return True
    return False


def test_a_stage_that_cannot_start_leaves_commands_to_fresh_sandboxes(run: Run,
                                                                     monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(warm_command, "STAGE", run.ws / "no-such-stage.py")
    for i in range(3):
        time.sleep(0.3)
        assert run.run(f"echo {i}").data["output"] == f"{i}\n"
    assert run.sandbox.warm_served == 0


def test_two_commands_at_once_take_the_kept_sandbox_once(run: Run) -> None:
    run.run("true")
    run.wait_kept()
    results: list[ToolResult] = []
    threads = [threading.Thread(target=lambda i=i: results.append(run.run(f"sleep 0.2; echo t{i}")))
               for i in range(2)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert sorted(str(r.data["output"]) for r in results) == ["t0\n", "t1\n"]
    assert run.sandbox.warm_served == 1


# --------------------------------------------------------------------------- stopped at once, in any sandbox
def _late_files(ws: Path) -> list[str]:
    return sorted(p.name for p in ws.glob("late-*"))


def _start_and_stop(run: Run, tries: int, warm: bool) -> int:
    """Start a command that writes a file 0.3 s later and stop it at once; how many files appeared."""
    from k1412_ls.tools.processes.child_processes import shell_argv, spawn

    leaks = 0
    run.run("true")  # a command has ended: the next one's sandbox is started
    for i in range(tries):
        if warm:
            run.wait_kept()
        else:
            run.drop_kept()
        handle = spawn(shell_argv(f"sleep 0.3; echo late > late-{i}"), run.ws, dict(os.environ),
                       sandbox=run.sandbox, workspace=run.ws)
        handle.kill()
        time.sleep(0.45)
        late = _late_files(run.ws)
        leaks += bool(late)
        for name in late:
            (run.ws / name).unlink()
    return leaks


@pytest.mark.e2e
@pytest.mark.parametrize("warm", [False, True])
def test_a_command_stopped_right_after_its_start_never_runs_on(run: Run, warm: bool) -> None:
    # bubblewrap takes a SIGTERM only once the command ends while it is still setting the sandbox up,
    # and passes none on: a sandboxed command is killed outright, and its cgroup emptied.
    assert _start_and_stop(run, 12, warm) == 0


@pytest.mark.e2e
def test_control_a_sigterm_and_a_grace_period_let_a_fresh_sandbox_run_on(run: Run,
                                                                          monkeypatch: pytest.MonkeyPatch) -> None:
    import signal

    from k1412_ls.tools.processes.child_processes import ProcessHandle

    def old_stop(self: ProcessHandle) -> None:
        self.signal_group(signal.SIGTERM)

    monkeypatch.setattr(ProcessHandle, "stop", old_stop)
    monkeypatch.setattr(ProcessHandle, "confined", property(lambda self: False))
    monkeypatch.setattr(ProcessHandle, "_kill_now", lambda self: self.signal_group(signal.SIGKILL))
    leaks = 0
    for _ in range(4):
        leaks += _start_and_stop(run, 10, warm=False)
        if leaks:
            break
    assert leaks >= 1


def test_a_run_command_timeout_of_a_millisecond_leaves_nothing_late(run: Run) -> None:
    for i in range(6):
        if i % 2:
            run.wait_kept()
        result = run.run(f"(sleep 0.3; echo late > late-a{i}) & setsid sh -c 'sleep 0.3; echo late > late-b{i}' & "
                         f"sleep 0.3; echo late > late-c{i}", timeout_s=0.001)
        assert result.data.get("timed_out"), result.data
    time.sleep(0.5)
    assert _late_files(run.ws) == []


def test_a_run_that_ends_while_the_next_sandbox_starts_leaves_no_stage(tmp_path: Path,
                                                                        monkeypatch: pytest.MonkeyPatch) -> None:
    ws = tmp_path / "ws"
    ws.mkdir()
    before = set(_processes_matching("command_stage.py"))
    started = WarmSandbox.__init__

    def slow_start(self: WarmSandbox, *args: Any) -> None:
        started(self, *args)
        time.sleep(0.3)  # a loaded machine: the start is still in flight when the run ends

    monkeypatch.setattr(WarmSandbox, "__init__", slow_start)
    for _ in range(3):
        session = Run(ws)
        assert session.run("echo hi").data["output"] == "hi\n"
        time.sleep(0.1)
        session.close()  # the next command's sandbox is still being started
        left = [p for p in _processes_matching("command_stage.py") if p not in before and _child_of_us(p)]
        assert left == []
