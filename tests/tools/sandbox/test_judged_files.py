"""What the approval read is what runs (``k1412_ls/tools/sandbox/pinned_files.py``, ``tools/approval/judged_reads.py``).

Found by the blind escape round 7 (``tests/escape/test_escape_round7.py``, class ``toctou``): under ``forbid git
push`` the rules read ``bash rel.sh`` (a Makefile, ``package.json``, ``./gt``) when the line is checked, and a
process rewrote the file before it ran. Each defence here has a control showing the attack working without it.
"""

from __future__ import annotations

import os
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from k1412_ls.tools.approval.approval_policy import ApprovalGate, ApprovalPolicy, PrefixRule
from k1412_ls.tools.errors import ToolError
from k1412_ls.tools.files.documents import DiskDocumentStore
from k1412_ls.tools.files.file_tools import TOOLS as FILE_TOOLS
from k1412_ls.tools.files.workspace import Workspace
from k1412_ls.tools.ports import RunServices
from k1412_ls.tools.processes.process_table import ProcessTable
from k1412_ls.tools.processes.process_tools import TOOLS as PROCESS_TOOLS
from k1412_ls.tools.processes.run_command import TOOLS as COMMAND_TOOLS
from k1412_ls.tools.registry import ToolContext, ToolRegistry, ToolResult
from k1412_ls.tools.sandbox import pinned_files
from k1412_ls.tools.sandbox.command_sandbox import RunSandbox, SandboxPolicy, bubblewrap

needs_bwrap = pytest.mark.skipif(not bubblewrap().active, reason="needs bubblewrap")
REGISTRY = ToolRegistry([*COMMAND_TOOLS, *PROCESS_TOOLS, *FILE_TOOLS])
FORBID_PUSH = (PrefixRule(("git", "push"), "forbid"),)
# A Python program (which the rules do not read) that swaps rel.sh for another script, as an attacker would.
SWAP = ("python3 -c \"import os,time; time.sleep({delay}); open('rel.sh.new','w').write('echo SWAPPED-$((40+2))\\n'); "
        "os.replace('rel.sh.new','rel.sh'); print('swap-done')\"")


class Run:
    """One run's tools with an approval gate wired as the runtime wires it."""

    def __init__(self, ws: Path, rules: tuple[PrefixRule, ...]) -> None:
        self.sandbox = RunSandbox(SandboxPolicy())
        self.processes = ProcessTable()
        gate = ApprovalGate(policy=ApprovalPolicy(rules=rules), sandbox=self.sandbox.policy, workspace=ws,
                            others_running=lambda: self.sandbox.registry.running() > 0)
        self.ctx = ToolContext(workspace=Workspace(ws), documents=DiskDocumentStore(ws),
                               services=RunServices(sandbox=self.sandbox, approval=gate, processes=self.processes))

    def call(self, tool: str, **args: object) -> ToolResult:
        return REGISTRY.execute(tool, dict(args), self.ctx)

    def close(self) -> None:
        self.processes.kill_all()
        self.sandbox.close()


@pytest.fixture
def ws(tmp_path: Path) -> Iterator[Path]:
    root = tmp_path / "ws"
    root.mkdir()
    (root / "rel.sh").write_text("echo benign-$((40+2))\n")
    yield root


def _output(result: ToolResult) -> str:
    return str(result.data.get("output", "")) + str(result.data.get("error") or "")


def _wait_done(run: Run, pid: str = "p1") -> str:
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline:
        polled = run.call("process_poll", process_id=pid, wait_s=1)
        if polled.data.get("status") != "running":
            return _output(polled)
    raise AssertionError("the background command did not end")


@needs_bwrap
@pytest.mark.parametrize("rules", [FORBID_PUSH, ()], ids=["judged", "control-no-rule"])
def test_a_line_cannot_rewrite_the_script_its_check_read(ws: Path, rules: tuple[PrefixRule, ...]) -> None:
    run = Run(ws, rules)
    try:
        out = _output(run.call("run_command", command=f"{SWAP.format(delay=0)}; bash rel.sh"))
    finally:
        run.close()
    if rules:
        assert "benign-42" in out and "SWAPPED-42" not in out and "swap-done" not in out, out
        assert (ws / "rel.sh").read_text() == "echo benign-$((40+2))\n"  # the host file was never replaced
    else:  # control: with nothing judged, the same line runs the swapped script
        assert "SWAPPED-42" in out, out


@needs_bwrap
@pytest.mark.parametrize("live_covers", [True, False], ids=["covered", "control-no-live-covers"])
def test_a_later_command_cannot_swap_a_file_a_running_command_was_approved_by(
        ws: Path, live_covers: bool, monkeypatch: pytest.MonkeyPatch) -> None:
    """The judged command runs in the background; a later command renames a file over the script. A cover in
    one mount namespace does not hold against a rename in another (the kernel detaches it), so every sandbox
    started meanwhile gets the covers too."""
    if not live_covers:
        monkeypatch.setattr(pinned_files.PinRegistry, "live", lambda self: ())
    run = Run(ws, FORBID_PUSH)
    try:
        started = run.call("process_start", command="sleep 3; bash rel.sh")
        assert started.ok, started.data
        swap = _output(run.call("run_command", command=SWAP.format(delay=0)))
        out = _wait_done(run)
    finally:
        run.close()
    if live_covers:
        assert "swap-done" not in swap, swap
        assert "benign-42" in out and "SWAPPED-42" not in out, out
    else:  # control: the rename from another sandbox detaches the first one's cover
        assert "swap-done" in swap, swap
        assert "SWAPPED-42" in out, out


@needs_bwrap
def test_content_is_not_trusted_while_another_command_of_the_run_runs(ws: Path) -> None:
    """A background process started before the check can rename over the path in its own namespace: asked
    (nobody to ask here: refused). Control: the same line once nothing else runs."""
    run = Run(ws, FORBID_PUSH)
    try:
        assert run.call("process_start", command="sleep 2").ok
        refused = run.call("run_command", command="bash rel.sh")
        assert not refused.ok and "another command of this run is running" in str(refused.data.get("error")), refused.data
        _wait_done(run)
        allowed = run.call("run_command", command="bash rel.sh")
    finally:
        run.close()
    assert "benign-42" in _output(allowed), _output(allowed)


@needs_bwrap
def test_the_file_tools_leave_a_judged_file_alone_while_its_command_runs(ws: Path) -> None:
    run = Run(ws, FORBID_PUSH)
    try:
        assert run.call("process_start", command="sleep 3; bash rel.sh").ok
        written = run.call("write_file", path="rel.sh", content="echo SWAPPED-$((40+2))\n")
        other = run.call("write_file", path="other.txt", content="x\n")
        out = _wait_done(run)
        after = run.call("write_file", path="rel.sh", content="echo later\n")
    finally:
        run.close()
    assert not written.ok and "in use by a running command" in str(written.data.get("error"))
    assert other.ok and after.ok  # control: other files, and the same file once the command ended
    assert "benign-42" in out and "SWAPPED-42" not in out, out


def _gate(ws: Path, others: bool = False) -> ApprovalGate:
    return ApprovalGate(policy=ApprovalPolicy(rules=FORBID_PUSH), sandbox=SandboxPolicy(network=True), workspace=ws,
                        others_running=lambda: others)


@pytest.mark.parametrize("command", ["bash rel.sh", ". ./rel.sh", "./rel.sh", "make -s rel", "npm run -s rel"])
def test_the_grant_names_exactly_the_bytes_the_check_read(ws: Path, command: str) -> None:
    (ws / "rel.sh").chmod(0o755)
    (ws / "Makefile").write_text("rel:\n\t@echo benign\n")
    (ws / "package.json").write_text('{"scripts": {"rel": "echo benign"}}')
    grant = _gate(ws).check(command)
    judged = dict(grant.judged)
    wanted = {"make": "Makefile", "npm": "package.json"}.get(command.split()[0], "rel.sh")
    assert judged[os.path.realpath(ws / wanted)] == (ws / wanted).read_bytes()
    with pytest.raises(ToolError, match="another command of this run is running"):
        _gate(ws, others=True).check(command)
    # Control: without a rule nothing is judged by content, so nothing is pinned or distrusted.
    assert ApprovalGate(sandbox=SandboxPolicy(network=True), workspace=ws,
                        others_running=lambda: True).check(command).judged == ()


def test_npm_install_is_judged_but_its_package_json_stays_writable(ws: Path) -> None:
    (ws / "package.json").write_text('{"scripts": {"postinstall": "echo hi"}}')
    assert _gate(ws).check("npm install").judged == ()
    with pytest.raises(ToolError, match="another command"):
        _gate(ws, others=True).check("npm install")


def test_a_script_reached_through_a_workspace_symlink_is_asked_when_something_could_re_point_it(ws: Path) -> None:
    """A mount on a symbolic link lands on its target, so the link itself cannot be pinned: another program of
    the line, or another command of the run, could re-point it between the check and the run."""
    (ws / "real.sh").write_text("echo benign\n")
    (ws / "link.sh").symlink_to("real.sh")
    with pytest.raises(ToolError, match="symbolic link"):
        _gate(ws).check("python3 tool.py; bash link.sh")
    assert dict(_gate(ws).check("python3 tool.py; bash real.sh").judged)  # control: by its own name it runs
    assert dict(_gate(ws).check("bash link.sh").judged)  # and alone on its line, nothing can re-point it first


def test_a_judged_file_gone_before_the_command_starts_is_refused(ws: Path) -> None:
    registry = pinned_files.PinRegistry()
    pins, copies = registry.materialize(((str(ws / "rel.sh"), b"echo benign\n"),))
    assert Path(pins[0][0]).read_bytes() == b"echo benign\n" and Path(copies).is_dir()
    release = registry.hold(pins, copies)
    assert pinned_files.pinned_by_a_command(str(ws / "rel.sh")) and registry.running() == 1
    release()
    assert not Path(copies).exists() and not pinned_files.pinned_by_a_command(str(ws / "rel.sh"))
    (ws / "rel.sh").unlink()
    with pytest.raises(ToolError, match="changed after the approval check"):
        registry.materialize(((str(ws / "rel.sh"), b"echo benign\n"),))
