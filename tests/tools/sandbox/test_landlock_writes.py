"""A read-only view passes no data into host processes: opening a FIFO for writing outside the writable trees
fails (``k1412_ls/tools/sandbox/landlock.py``; blind escape round 7, class ``fifo``).

A read-only bind mount refuses writes to files, not opening a named pipe for writing. Each case has a control
with Landlock taken away, where the same write reaches the host reader.
"""

from __future__ import annotations

import contextlib
import os
import shutil
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest

from k1412_ls.tools.sandbox import confinement, landlock
from k1412_ls.tools.sandbox.command_sandbox import SandboxPolicy, bubblewrap
from tests.tools.sandbox.test_warm_command import Run

pytestmark = [pytest.mark.skipif(not bubblewrap().active, reason="needs bubblewrap"),
              pytest.mark.skipif(not landlock.available(), reason="needs a kernel with Landlock")]

WRITE = ("python3 -c \"import os,sys; fd=os.open(sys.argv[1], os.O_WRONLY|os.O_NONBLOCK); "
         "os.write(fd, b'FIFOHIT-42'); print('fifo-written')\" {path} 2>&1 | tail -1")


# git's object store moves files between directories (what Landlock denies unless REFER is granted); run from
# Python so the approval policy (a push wants the network) has no say in this test of the write rules.
GIT_PUSH = ("python3 -c \"import subprocess as s; c=dict(check=True); s.run(['git','init','-q','--bare','/tmp/r.git'],**c); "
            "s.run(['git','init','-q','repo'],**c); s.run(['git','-C','repo','-c','user.name=t','-c','user.email=t@e',"
            "'commit','-q','--allow-empty','-m','x'],**c); s.run(['git','-C','repo','push','-q','/tmp/r.git',"
            "'HEAD:refs/heads/x'],**c); print('pushed')\"")


class HostFifo:
    """A FIFO a host process reads (opened read-write, so a writer never blocks)."""

    def __init__(self, path: Path) -> None:
        os.mkfifo(path)
        self.fd = os.open(path, os.O_RDWR | os.O_NONBLOCK)

    def read(self) -> bytes:
        with contextlib.suppress(BlockingIOError):
            return os.read(self.fd, 4096)
        return b""

    def close(self) -> None:
        os.close(self.fd)


@pytest.fixture
def lab() -> Iterator[tuple[Run, Path, HostFifo]]:
    # Not under /tmp: a command's /tmp is the run's private one, which would hide the FIFO for another reason.
    root = Path(tempfile.mkdtemp(prefix="k1412-landlock-", dir="/var/tmp"))
    ws = root / "ws"
    (root / "outside").mkdir()
    ws.mkdir()
    fifo = HostFifo(root / "outside" / "ctl.fifo")
    run = Run(ws, SandboxPolicy())
    try:
        yield run, root / "outside" / "ctl.fifo", fifo
    finally:
        run.close()
        fifo.close()
        shutil.rmtree(root, ignore_errors=True)


@pytest.mark.parametrize("landlocked", [True, False], ids=["landlock", "control-without"])
def test_a_command_cannot_feed_a_host_fifo_beside_the_workspace(lab: tuple[Run, Path, HostFifo], landlocked: bool,
                                                                monkeypatch: pytest.MonkeyPatch) -> None:
    run, path, fifo = lab
    if not landlocked:
        monkeypatch.setattr(confinement, "landlock_works", lambda: False)
    out = run.run(WRITE.format(path=path)).data["output"]
    if landlocked:
        assert fifo.read() == b"" and "Permission denied" in out, out
    else:  # control: the read-only mount alone lets the write through
        assert fifo.read() == b"FIFOHIT-42" and "fifo-written" in out, out


def test_a_kept_sandbox_is_landlocked_as_a_fresh_one(lab: tuple[Run, Path, HostFifo]) -> None:
    run, path, fifo = lab
    run.run("true")
    run.wait_kept()
    served = run.sandbox.warm_served
    out = run.run(WRITE.format(path=path)).data["output"]
    assert run.sandbox.warm_served == served + 1  # it ran in the kept sandbox
    assert fifo.read() == b"" and "Permission denied" in out, out


def test_writes_inside_the_writable_trees_still_work(tmp_path: Path) -> None:
    ws = tmp_path / "ws"
    ws.mkdir()
    cache = tmp_path / "cache"
    cache.mkdir()
    run = Run(ws, SandboxPolicy(writable=(str(cache),)))
    try:
        line = (f"echo a > a.txt && mkfifo own.fifo && (cat own.fifo > got.txt &) && echo piped > own.fifo && "
                f"echo b > /tmp/b && echo c > /dev/null && echo d > /dev/stdout && echo e > {cache}/e && "
                "python3 -c \"import sqlite3; c=sqlite3.connect('db.sqlite'); c.execute('create table t(x)'); "
                "c.commit(); print('sqlite ok')\" && mkdir -p d1 d2 /tmp/t1 && echo m > d1/m && mv d1/m d2/m && "
                "mv d2/m /tmp/t1/m && mv /tmp/t1/m d1/m && ln d1/m d2/hard && "
                f"{GIT_PUSH} && "
                "sleep 0.2 && cat got.txt && echo ALL-OK")
        result = run.run(line)
    finally:
        run.close()
    out = result.data["output"]
    assert "ALL-OK" in out and "piped" in out and "sqlite ok" in out and "pushed" in out, out
    assert (ws / "a.txt").read_text() == "a\n" and (cache / "e").read_text() == "e\n"


def test_the_command_gets_exactly_its_environment(lab: tuple[Run, Path, HostFifo]) -> None:
    """The helper's interpreter adds LC_CTYPE for its own locale; the command must not see it."""
    run, _, _ = lab
    out = run.run("env | grep -c '^LC_CTYPE=' || true", ).data["output"]
    assert out.strip().splitlines()[-1] == ("1" if "LC_CTYPE" in os.environ else "0"), out


def test_a_command_cannot_take_a_lease_a_host_process_would_wait_on(lab: tuple[Run, Path, HostFifo]) -> None:
    """Round 7, ``lock``: a read lease on a file the command owns but may only read makes a host writer's open
    fail or wait 45 s. The filter refuses ``F_SETLEASE``. Control: the same lease works on the host."""
    import fcntl

    run, path, _ = lab
    target = path.parent / "gitconfig"
    target.write_text("[user]\n")
    fd = os.open(target, os.O_RDONLY)
    try:
        fcntl.fcntl(fd, fcntl.F_SETLEASE, fcntl.F_RDLCK)  # control: allowed outside the sandbox
        fcntl.fcntl(fd, fcntl.F_SETLEASE, fcntl.F_UNLCK)
    finally:
        os.close(fd)
    probe = (f"python3 -c \"import fcntl,os; fd=os.open('{target}', os.O_RDONLY); "
             "fcntl.fcntl(fd, fcntl.F_SETLEASE, fcntl.F_RDLCK); print('LEASED')\" 2>&1 | tail -1")
    out = run.run(probe).data["output"]
    assert "LEASED" not in out and "Operation not permitted" in out, out


def test_a_single_writable_file_is_a_rule_the_kernel_takes(tmp_path: Path) -> None:
    # A writable mount can be one file (a home workspace's shown ~/.gitconfig): the rule on it carries only
    # file rights, or the kernel refuses the whole ruleset and no command can start.
    ws = tmp_path / "ws"
    ws.mkdir()
    single = tmp_path / "notes.txt"
    single.write_text("old\n")
    run = Run(ws, SandboxPolicy(writable=(str(single),)))
    try:
        result = run.run(f"echo new > {single} && echo fine > here.txt && cat {single}")
    finally:
        run.close()
    assert "new" in result.data["output"] and "could not be applied" not in result.data["output"], result.data
    assert single.read_text() == "new\n" and (ws / "here.txt").read_text() == "fine\n"
