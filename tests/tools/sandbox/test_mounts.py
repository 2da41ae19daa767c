"""PATH directories that do not exist yet stay uncreatable, and the mount points that takes are cleaned up.

Attack: the user's PATH names ``ws/.venv/bin``, which does not exist when the run starts; a command makes
it and plants ``git`` there for the user's next shell.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from k1412_ls.tools.files.documents import DiskDocumentStore
from k1412_ls.tools.files.workspace import Workspace
from k1412_ls.tools.processes.run_command import RunCommandArgs, run_command
from k1412_ls.tools.registry import ToolContext
from k1412_ls.tools.sandbox.command_sandbox import bubblewrap
from k1412_ls.tools.sandbox.mounts import Placeholders, missing_components

PLANT = "mkdir -p .venv/bin && printf '#!/bin/sh\\necho planted\\n' > .venv/bin/git; echo rc=$?; ls -d .venv/bin"


def fresh(ws: Path) -> ToolContext:
    return ToolContext(workspace=Workspace(ws), documents=DiskDocumentStore(ws), run_id="r-mounts")


@pytest.mark.skipif(not bubblewrap().active, reason="bubblewrap is not usable here")
def test_a_path_directory_made_later_cannot_be_planted(ws: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # Positive control: with .venv/bin not on PATH, the same command plants the program.
    control = fresh(ws)
    done = run_command(RunCommandArgs(command=PLANT), control)
    assert "rc=0" in done.data["output"] and (ws / ".venv" / "bin" / "git").exists()
    (ws / ".venv" / "bin" / "git").unlink()
    (ws / ".venv" / "bin").rmdir()
    (ws / ".venv").rmdir()
    monkeypatch.setenv("PATH", f"{ws}/.venv/bin:{os.environ['PATH']}")
    ctx = fresh(ws)
    done = run_command(RunCommandArgs(command=PLANT), ctx)
    assert "rc=0" not in done.data["output"] and ".venv/bin" in done.data["output"]  # it ran; bin was read-only
    assert not (ws / ".venv").exists(), "the placeholder directories were left behind"
    # The whole missing .venv is the read-only placeholder: nothing can be made there, not even beside bin.
    done = run_command(RunCommandArgs(command="mkdir -p .venv && echo kept > .venv/pyvenv.cfg; echo rc=$?"), ctx)
    assert "rc=0" not in done.data["output"] and not (ws / ".venv").exists()


@pytest.mark.skipif(not bubblewrap().active, reason="bubblewrap is not usable here")
@pytest.mark.parametrize("entry", ["abs", "relative"])
def test_a_path_directory_cannot_be_renamed_away_and_made_again(ws: Path, monkeypatch: pytest.MonkeyPatch,
                                                                entry: str) -> None:
    (ws / "node_modules" / ".bin").mkdir(parents=True)
    (ws / "node_modules" / ".bin" / "lint").write_text("#!/bin/sh\necho lint\n")
    swap = ("mv node_modules old 2>&1; mkdir -p node_modules/.bin && echo evil > node_modules/.bin/git; "
            "echo evil >> node_modules/.bin/lint; echo rc=$?; ls node_modules/.bin")
    # Positive control: not on PATH, the directory is ordinary workspace and the swap works.
    done = run_command(RunCommandArgs(command=swap), fresh(ws))
    assert (ws / "node_modules" / ".bin" / "git").exists() and (ws / "old").is_dir(), done.data
    (ws / "node_modules" / ".bin" / "git").unlink()
    (ws / "node_modules" / ".bin" / "lint").write_text("#!/bin/sh\necho lint\n")
    path_entry = f"{ws}/node_modules/.bin" if entry == "abs" else "node_modules/.bin"
    monkeypatch.setenv("PATH", f"{path_entry}:{os.environ['PATH']}")
    done = run_command(RunCommandArgs(command=swap), fresh(ws))
    assert "lint" in done.data["output"]  # it ran
    assert not (ws / "node_modules" / ".bin" / "git").exists(), done.data
    assert (ws / "node_modules" / ".bin" / "lint").read_text() == "#!/bin/sh\necho lint\n"


def test_placeholders_are_counted_and_only_empty_ones_removed(tmp_path: Path) -> None:
    target = str(tmp_path / "a" / "b" / "bin")
    assert missing_components(target) == [str(tmp_path / "a"), str(tmp_path / "a" / "b"), target]
    held = Placeholders()
    held.acquire([target])
    os.makedirs(target)  # what bubblewrap does for the mount point
    held.acquire([target])
    held.release([target])
    assert os.path.isdir(target), "removed while another command still needs it"
    (tmp_path / "a" / "note").write_text("user data")
    held.release([target])
    assert not os.path.exists(target) and not (tmp_path / "a" / "b").exists()
    assert (tmp_path / "a" / "note").read_text() == "user data" and held.held() == []


def test_a_missing_path_below_a_symlink_or_file_gets_no_placeholder(tmp_path: Path) -> None:
    (tmp_path / "file").write_text("x")
    os.symlink(tmp_path / "nowhere", tmp_path / "link")
    assert missing_components(str(tmp_path / "file" / "bin")) is None
    assert missing_components(str(tmp_path / "link" / "bin")) is None
    assert missing_components(str(tmp_path)) is None  # exists: nothing to make


def test_a_tree_locked_where_a_writable_root_is_bound_stays_locked() -> None:
    from k1412_ls.tools.sandbox.mounts import MountPlan

    plan = MountPlan()
    plan.bind("/home/u")
    plan.lock("/home/u")  # a home workspace: home read-only again…
    plan.bind("/home/u/projects")  # …its visible entries writable
    assert not plan.writable_at("/home/u/.local/bin") and not plan.writable_at("/home/u")
    assert plan.writable_at("/home/u/projects/app.py")
