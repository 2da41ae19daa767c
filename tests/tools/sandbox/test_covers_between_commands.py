"""What a run hides and keeps read-only holds as of each command's start, not the run's.

Found by the blind escape round 4 (``tests/escape/test_escape_round4.py``): a hidden path reached
through a symlink was resolved once per run, so re-pointing the symlink between two commands exposed
the new target; a hidden directory in the workspace escaped its cover when a command renamed its
parent; and a search whose sandbox did not start answered "no matches". Each case here has a control
that shows the attack working when the defence is taken away.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from k1412_ls.tools.errors import ToolError
from k1412_ls.tools.files.documents import DiskDocumentStore
from k1412_ls.tools.files.file_tools import TOOLS as FILE_TOOLS
from k1412_ls.tools.files.search import TOOLS as SEARCH_TOOLS
from k1412_ls.tools.files.search import rg_search
from k1412_ls.tools.files.workspace import Workspace
from k1412_ls.tools.registry import ToolContext, ToolRegistry
from k1412_ls.tools.sandbox import mounts, path_trace
from k1412_ls.tools.sandbox.command_sandbox import SandboxPolicy, bubblewrap
from k1412_ls.tools.sandbox.mounts import MountPlan
from k1412_ls.tools.sandbox.path_trace import PathTrace
from k1412_ls.tools.sandbox.trusted import trusted_program
from tests.tools.sandbox.test_warm_command import Run

needs_bwrap = pytest.mark.skipif(not bubblewrap().active, reason="needs bubblewrap")


# ----------------------------------------------------------------------------- resolving paths as they are now
def _tree(base: Path) -> list[str]:
    """Symlinks of every shape: relative, absolute, chained, through '..', dangling, looping."""
    (base / "real" / "deep").mkdir(parents=True)
    (base / "real" / "deep" / "f").write_text("x")
    (base / "rel").symlink_to("real")
    (base / "abs").symlink_to(base / "real")
    (base / "chain").symlink_to("rel/deep")
    (base / "up").symlink_to("real/deep/..")
    (base / "real" / "back").symlink_to("../chain")
    (base / "dangling").symlink_to("nowhere/else")
    (base / "loop1").symlink_to("loop2")
    (base / "loop2").symlink_to("loop1")
    names = ["real/deep/f", "rel/deep/f", "abs/deep", "chain/f", "up/deep/f", "real/back/f", "dangling/x",
             "missing/a/../b", "rel/../abs/deep", "loop1/x", "real/./deep//f", "chain/../deep"]
    return [str(base / n) for n in names]


def test_a_trace_resolves_every_path_as_the_system_does(tmp_path: Path) -> None:
    paths = _tree(tmp_path)
    trace = PathTrace()
    for path in paths:
        if "loop" in path:
            continue  # a loop has no real path; it only must not hang (below)
        assert trace.resolve(path) == os.path.realpath(path), path
    assert trace.resolve(str(tmp_path / "loop1" / "x"))  # ends
    assert trace.unchanged()


@pytest.mark.parametrize("change", ["re-point a link", "replace a directory by a link", "make a missing path",
                                    "remove a link", "same inode new target"])
def test_a_trace_notices_what_would_change_an_answer(tmp_path: Path, change: str,
                                                     monkeypatch: pytest.MonkeyPatch) -> None:
    paths = _tree(tmp_path)
    (tmp_path / "real2" / "deep").mkdir(parents=True)
    trace = PathTrace()
    trace.resolve_all(paths)
    assert trace.unchanged()
    if change == "re-point a link":
        (tmp_path / "tmp-link").symlink_to("real2")
        (tmp_path / "tmp-link").rename(tmp_path / "rel")
    elif change == "replace a directory by a link":
        (tmp_path / "real" / "deep").rename(tmp_path / "moved")
        (tmp_path / "real" / "deep").symlink_to(tmp_path / "real2" / "deep")
    elif change == "make a missing path":
        (tmp_path / "missing").mkdir()
    elif change == "remove a link":
        (tmp_path / "chain").unlink()
    else:  # a new link that got the old one's inode number: the target is compared too
        real_look = path_trace._look

        def same_inode(path: str) -> path_trace.Seen:
            seen = real_look(path)
            if path == str(tmp_path / "rel") and seen is not None:
                return (*trace.seen[path][:3], seen[3])  # type: ignore[index]
            return seen

        (tmp_path / "tmp-link").symlink_to("real2")
        (tmp_path / "tmp-link").rename(tmp_path / "rel")
        monkeypatch.setattr(path_trace, "_look", same_inode)
    assert not trace.unchanged()


# ----------------------------------------------------------------------------- a symlinked secret re-pointed
@needs_bwrap
@pytest.mark.parametrize("defended", [True, False])
def test_a_hidden_path_re_pointed_between_commands_stays_hidden(tmp_path: Path, defended: bool,
                                                                 monkeypatch: pytest.MonkeyPatch) -> None:
    home = Path(os.environ.get("K1412_TEST_BASE", "/var/tmp")) / f"k1412-home-{os.getpid()}-{defended}"
    ws = tmp_path / "ws"
    ws.mkdir()
    try:
        for name in ("dots", "dots2"):
            (home / name / "ssh").mkdir(parents=True)
            (home / name / "ssh" / "id_rsa").write_text(f"KEY-{name}\n")
        (home / ".ssh").symlink_to("dots/ssh")
        monkeypatch.setenv("HOME", str(home))
        if not defended:  # the control: what a run that resolved its covers once would do
            monkeypatch.setattr(PathTrace, "unchanged", lambda self: True)
        run = Run(ws, SandboxPolicy(readable=("~",)))  # all of home shown: only the secret covers hide it
        try:
            first = run.run("cat ~/.ssh/id_rsa")
            (home / "tmp-link").symlink_to("dots2/ssh")
            (home / "tmp-link").rename(home / ".ssh")
            second = run.run("cat ~/.ssh/id_rsa; cat ~/dots2/ssh/id_rsa; cat ~/dots/ssh/id_rsa")
        finally:
            run.close()
    finally:
        for path in sorted(home.rglob("*"), key=lambda p: -len(p.parts)):
            path.unlink() if path.is_symlink() or path.is_file() else path.rmdir()
        home.rmdir()
    assert "KEY-dots" not in str(first.data["output"])
    if defended:  # the new target is covered, and the old one stays covered for the rest of the run
        assert "KEY-dots" not in str(second.data["output"])
    else:
        assert "KEY-dots2" in str(second.data["output"])


# ----------------------------------------------------------------------------- a hidden dir's parent renamed
@needs_bwrap
@pytest.mark.parametrize("defended", [True, False])
def test_renaming_the_parent_of_a_hidden_directory_is_refused(tmp_path: Path, defended: bool,
                                                              monkeypatch: pytest.MonkeyPatch) -> None:
    ws = tmp_path / "ws"
    (ws / "conf" / "credentials").mkdir(parents=True)
    (ws / "conf" / "credentials" / "token.txt").write_text("TOKEN-123\n")
    (ws / "conf" / "app.cfg").write_text("ok\n")
    if not defended:
        monkeypatch.setattr(MountPlan, "anchor_ancestors", lambda self, path: None)
    run = Run(ws, SandboxPolicy(hidden=(str(ws / "conf" / "credentials"),)))
    try:
        moved = run.run("cat conf/app.cfg; mv conf conf.bak && echo moved")
        after = run.run("cat conf.bak/credentials/token.txt conf/credentials/token.txt")
    finally:
        run.close()
    assert "ok" in str(moved.data["output"])  # control: the command ran and could read its config
    if defended:
        assert "moved" not in str(moved.data["output"]) and (ws / "conf").is_dir()
        assert "TOKEN-123" not in str(after.data["output"])
    else:
        assert "moved" in str(moved.data["output"]) and "TOKEN-123" in str(after.data["output"])


def test_anchors_are_placed_before_every_cover_shallowest_first(tmp_path: Path) -> None:
    ws = tmp_path / "ws"
    (ws / "a" / "b" / "c").mkdir(parents=True)
    (ws / "a" / "bin").mkdir()
    plan = MountPlan()
    plan.bind(str(ws))
    plan.start_covers()
    plan.protect_path_dir(str(ws / "a" / "bin"))
    plan.hide(str(ws / "a" / "b" / "c"), [])
    plan.place_anchors()
    flags = plan.flags
    binds = [flags[i + 1] for i, f in enumerate(flags) if f == "--bind"]
    assert binds == [str(ws), str(ws / "a"), str(ws / "a" / "b")]
    first_cover = min(i for i, f in enumerate(flags) if f in ("--ro-bind", "--tmpfs"))
    assert max(i for i, f in enumerate(flags) if f == "--bind") < first_cover
    assert mounts.inside(str(ws / "a" / "b"), str(ws))


# ----------------------------------------------------------------------------- a search whose sandbox failed
@needs_bwrap
def test_a_search_whose_sandbox_does_not_start_fails_instead_of_finding_nothing(tmp_path: Path) -> None:
    rg = trusted_program("rg")
    if rg is None:
        pytest.skip("needs ripgrep")
    (tmp_path / "a.txt").write_text("needle\n")
    box = bubblewrap().path
    assert box is not None

    def broken(argv: list[str]) -> tuple[list[str], dict[str, str]]:
        return [box, "--ro-bind", str(tmp_path / "no-such-source"), "/x", "--", *argv], {}

    def working(argv: list[str]) -> tuple[list[str], dict[str, str]]:
        return [box, "--ro-bind", "/", "/", "--", *argv], {}

    found = rg_search(rg, tmp_path, tmp_path, "needle", False, None, 10, confine=working)
    assert [m.path for m in found] == ["a.txt"]  # control: the same search in a sandbox that starts
    with pytest.raises(ToolError, match="could not start in its sandbox"):
        rg_search(rg, tmp_path, tmp_path, "needle", False, None, 10, confine=broken)
    assert rg_search(rg, tmp_path, tmp_path, "absent", False, None, 10, confine=working) == []


def test_search_files_tool_still_answers_no_match_plainly(tmp_path: Path) -> None:
    (tmp_path / "a.txt").write_text("hay\n")
    ctx = ToolContext(workspace=Workspace(tmp_path), documents=DiskDocumentStore(tmp_path))
    result = ToolRegistry(SEARCH_TOOLS).execute("search_files", {"query": "needle"}, ctx)
    assert result.ok and result.data["matches"] == []


def test_the_file_tools_refuse_a_re_pointed_secret_and_its_old_target(tmp_path: Path,
                                                                      monkeypatch: pytest.MonkeyPatch) -> None:
    home = tmp_path / "home"
    for name in ("dots", "dots2"):
        (home / name / "ssh").mkdir(parents=True)
        (home / name / "ssh" / "id_rsa").write_text(f"KEY-{name}\n")
    (home / "notes.txt").write_text("plain\n")
    (home / ".ssh").symlink_to("dots/ssh")
    monkeypatch.setenv("HOME", str(home))
    ctx = ToolContext(workspace=Workspace(home), documents=DiskDocumentStore(home))
    registry = ToolRegistry(FILE_TOOLS)

    def read(path: str) -> str:
        result = registry.execute("read_file", {"path": path}, ctx)
        return str(result.data.get("content", "")) if result.ok else "refused"

    assert "plain" in read("notes.txt")  # control: the file tools read the workspace
    assert read("dots/ssh/id_rsa") == "refused"
    assert "KEY-dots2" in read("dots2/ssh/id_rsa")  # control: not a secret path yet
    (home / "tmp-link").symlink_to("dots2/ssh")
    (home / "tmp-link").rename(home / ".ssh")
    assert read("dots2/ssh/id_rsa") == "refused"
    assert read("dots/ssh/id_rsa") == "refused"
