"""What a run leaves for the user's own shell: no setuid/setgid file, no program shadowing a system one, no /tmp.

Each attack is a command the model runs; what is checked is the workspace (and the host's temporary
directory) after the run has ended. Each has a positive control: the planted thing is really there,
or really works, until the run's end makes it harmless.
"""

from __future__ import annotations

import os
import shutil
import stat
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import pytest

from k1412_ls.tools.sandbox.command_sandbox import SandboxPolicy, bubblewrap
from k1412_ls.tools.sandbox.run_cleanup import remove_tree
from tests.tools.sandbox.test_warm_command import Run

pytestmark = pytest.mark.skipif(not bubblewrap().active, reason="bubblewrap is not usable here")

SPECIAL = stat.S_ISUID | stat.S_ISGID


def _special(path: Path) -> int:
    return os.lstat(path).st_mode & SPECIAL


def test_setuid_and_setgid_files_made_by_a_run_lose_the_bits(tmp_path: Path) -> None:
    ws = tmp_path / "ws"
    ws.mkdir()
    mine = ws / "mine-setgid"  # the user's own, from before the run: left alone
    mine.write_text("#!/bin/sh\n")
    mine.chmod(0o2755)
    time.sleep(1.2)  # the run looks at what changed from one second before it started
    run = Run(ws)
    try:
        command = (f"{sys.executable} -c \"import os; os.close(os.open('made-4755', os.O_CREAT | os.O_WRONLY, 0o4755))\"; "
                   "cp -p /usr/bin/passwd copied-p 2>/dev/null; install -m 6755 /bin/true installed; "
                   f"mkdir -p t && tar -C t -cf - . >/dev/null; echo done")
        assert "done" in run.run(command).data["output"]
        # The control: a file the run made setuid on the host, as a command's result would be.
        control = ws / "control"
        control.write_text("x")
        control.chmod(0o4755)
        assert _special(control)
    finally:
        run.close()
    for name in ("made-4755", "copied-p", "installed", "control"):
        if (ws / name).exists():
            assert not _special(ws / name), name
    assert (ws / "control").stat().st_mode & 0o777 == 0o755  # only the special bits went
    assert _special(mine) == stat.S_ISGID


def test_a_program_planted_for_a_relative_path_entry_never_runs_as_the_system_one(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    ws = tmp_path / "ws"
    (ws / "sub").mkdir(parents=True)
    plain = os.environ["PATH"]
    monkeypatch.setenv("PATH", f"node_modules/.bin::{plain}")
    run = Run(ws)
    bin_dir = ws / "sub" / "node_modules" / ".bin"
    try:
        plant = ("mkdir -p sub/node_modules/.bin && printf '#!/bin/sh\\necho PLANTED-GIT\\n' > sub/node_modules/.bin/git "
                 "&& chmod +x sub/node_modules/.bin/git && cp sub/node_modules/.bin/git sub/node_modules/.bin/mytool "
                 "&& ln -s /bin/sh sub/node_modules/.bin/ls && cd sub && git --version; echo PATH=$PATH; "
                 "PATH=node_modules/.bin:$PATH git")  # the control: with the entry, the plant is what runs
        result = run.run(plant)
        output = result.data["output"]
        assert "git version" in output and output.count("PLANTED-GIT") == 1, output
        assert "PATH=/" in output and ":node_modules" not in output and "::" not in output
        assert "node_modules/.bin" in result.data["note"]
        assert os.access(bin_dir / "git", os.X_OK)  # still planted while the run goes on
    finally:
        run.close()
    # The user's own shell, with the relative entry, runs the system git again; a package's own tool keeps working.
    shell = subprocess.run(["bash", "-c", "cd sub && git --version && ls /dev/null"], cwd=ws, capture_output=True,
                           text=True, env={**os.environ, "PATH": f"node_modules/.bin:{plain}"})
    assert "git version" in shell.stdout and "PLANTED" not in shell.stdout and "/dev/null" in shell.stdout
    assert not os.access(bin_dir / "git", os.X_OK) and not os.path.lexists(bin_dir / "ls")
    assert os.access(bin_dir / "mytool", os.X_OK)


# A tree deeper than any path may be long, unreadable directories, and names of every odd kind.
HOSTILE_TREE = r"""
import os, sys
top, depth = sys.argv[1], int(sys.argv[2])
fd = os.open(top, os.O_RDONLY | os.O_DIRECTORY)
for _ in range(depth):
    os.mkdir("d" * 40, dir_fd=fd)
    inner = os.open("d" * 40, os.O_RDONLY | os.O_DIRECTORY, dir_fd=fd)
    os.close(fd)
    fd = inner
os.close(fd)
for name in ("-rf", "new\nline", "..x", " lead", "*"):
    os.mkdir(os.path.join(top, name))
    open(os.path.join(top, name, "f"), "w").close()
open(os.path.join(top, os.fsdecode(b"bad-\xff\xfe")), "w").close()
os.mkfifo(os.path.join(top, "fifo"))
os.makedirs(os.path.join(top, "locked", "inner"))
open(os.path.join(top, "locked", "inner", "f"), "w").close()
os.chmod(os.path.join(top, "locked", "inner"), 0)
os.chmod(os.path.join(top, "locked"), 0)
if len(sys.argv) > 3:
    os.symlink(sys.argv[3], os.path.join(top, "link-out"))
print("built")
"""


def test_the_runs_private_tmp_goes_whatever_it_holds(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    host_tmp = tmp_path / "host-tmp"
    host_tmp.mkdir()
    canary = tmp_path / "outside.txt"
    canary.write_text("keep\n")
    monkeypatch.setattr(tempfile, "tempdir", str(host_tmp))
    ws = tmp_path / "ws"
    ws.mkdir()
    (ws / "build.py").write_text(HOSTILE_TREE)
    run = Run(ws)
    try:
        result = run.run(f"{sys.executable} build.py /tmp 1100 {canary}")
        assert "built" in result.data["output"], result.data["output"]
        kept = list(host_tmp.iterdir())
        assert len(kept) == 1 and (kept[0] / "link-out").is_symlink()  # the control: it is all on the host
    finally:
        run.close()
    assert list(host_tmp.iterdir()) == []
    assert canary.read_text() == "keep\n"  # a symlink out is removed, never followed


def test_the_old_removal_left_such_a_tree_behind(tmp_path: Path) -> None:
    """Positive control for the test above: ``shutil.rmtree(ignore_errors=True)`` does not remove it."""
    top = tmp_path / "tree"
    top.mkdir()
    subprocess.run([sys.executable, "-c", HOSTILE_TREE, str(top), "1100"], check=True, capture_output=True)
    try:
        shutil.rmtree(top, ignore_errors=True)
    except RecursionError:
        pass
    assert top.exists()
    assert remove_tree(str(top)) and not top.exists()


def test_a_user_listed_readable_path_and_all_of_home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    home = Path(os.environ.get("K1412_TEST_BASE", "/var/tmp")) / f"k1412-home-view-{os.getpid()}"
    ws = tmp_path / "ws"
    ws.mkdir()
    try:
        (home / "notes").mkdir(parents=True)
        (home / "notes" / "plan.txt").write_text("PLAN-CANARY\n")
        (home / ".bash_history").write_text("export GITHUB_PAT=HISTORY-CANARY\n")
        (home / ".cache" / "pip").mkdir(parents=True)
        monkeypatch.setenv("HOME", str(home))
        command = "echo LS=$(ls -A ~ | tr '\\n' ,); cat ~/notes/plan.txt ~/.bash_history 2>&1; echo end"
        outputs = []
        for readable in ((), (str(home / "notes"),), ("~",)):
            run = Run(ws, SandboxPolicy(readable=readable))
            try:
                outputs.append(run.run(command).data["output"])
            finally:
                run.close()
    finally:
        shutil.rmtree(home, ignore_errors=True)
    default, listed, everything = outputs
    assert "LS=.cache,\n" in default and "PLAN-CANARY" not in default, default  # only the pip cache is shown
    assert "PLAN-CANARY" in listed and "HISTORY-CANARY" not in listed
    assert "PLAN-CANARY" in everything and "HISTORY-CANARY" not in everything  # history stays hidden
