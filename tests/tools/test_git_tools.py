"""git_status and git_diff on real repositories, including hostile ones.

Every attack has a positive control: plain git on the same repository runs
the planted command (a marker file appears), so the test proves that our
tools are what stops it, not a quirk of the setup.
"""

from __future__ import annotations

import os
import subprocess
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import pytest

from k1412_ls.tools import git
from k1412_ls.tools.files.documents import DiskDocumentStore
from k1412_ls.tools.files.workspace import Workspace
from k1412_ls.tools.registry import ToolContext, ToolRegistry, ToolResult

REGISTRY = ToolRegistry(git.TOOLS)
PLAIN_ENV = {**os.environ, "GIT_CONFIG_NOSYSTEM": "1"}


def sh(cwd: Path, *argv: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(list(argv), cwd=cwd, env=PLAIN_ENV, capture_output=True, text=True, timeout=60, check=False)


def make_repo(path: Path) -> Path:
    path.mkdir(parents=True, exist_ok=True)
    sh(path, "git", "init", "-q", "-b", "main")
    sh(path, "git", "config", "user.email", "k@example.invalid")
    sh(path, "git", "config", "user.name", "K")
    (path / "a.txt").write_text("one\ntwo\n")
    (path / "lib.py").write_text("x = 1\n")
    sh(path, "git", "add", ".")
    sh(path, "git", "commit", "-qm", "init")
    return path


def ctx_for(root: Path) -> ToolContext:
    return ToolContext(workspace=Workspace(root), documents=DiskDocumentStore(), run_id="r-git")


def call(ctx: ToolContext, tool: str, **arguments: object) -> ToolResult:
    return REGISTRY.execute(tool, dict(arguments), ctx)


def make_stat_dirty(repo: Path) -> None:
    """Same content, new mtime: git must re-read (and so clean-filter) the file."""
    st = os.stat(repo / "a.txt")
    os.utime(repo / "a.txt", ns=(st.st_atime_ns, st.st_mtime_ns + 5_000_000_000))


# --- basic behaviour ----------------------------------------------------------------------------------

def test_status_lists_changes_with_facts(tmp_path: Path) -> None:
    repo = make_repo(tmp_path / "repo")
    (repo / "a.txt").write_text("one\nTWO\n")
    (repo / "new.md").write_text("new\n")
    sh(repo, "git", "add", "new.md")
    result = call(ctx_for(repo), "git_status")
    assert result.data["ok"] is True
    assert result.data["clean"] is False
    lines = result.data["output"].splitlines()
    assert lines[0] == "## main"
    assert " M a.txt" in lines and "A  new.md" in lines
    assert result.facts == {"kind": "git", "op": "status", "paths": ["a.txt", "new.md"]}


def test_clean_status(tmp_path: Path) -> None:
    result = call(ctx_for(make_repo(tmp_path / "repo")), "git_status")
    assert result.data["clean"] is True
    assert result.facts["paths"] == []


def test_diff_unstaged_staged_and_by_path(tmp_path: Path) -> None:
    repo = make_repo(tmp_path / "repo")
    (repo / "a.txt").write_text("one\nTWO\n")
    (repo / "lib.py").write_text("x = 2\n")
    sh(repo, "git", "add", "lib.py")
    ctx = ctx_for(repo)
    unstaged = call(ctx, "git_diff")
    assert "-two\n+TWO" in unstaged.data["output"]
    assert "lib.py" not in unstaged.data["output"]
    assert unstaged.facts == {"kind": "git", "op": "diff", "paths": ["a.txt"], "staged": False}
    staged = call(ctx, "git_diff", staged=True)
    assert "-x = 1\n+x = 2" in staged.data["output"]
    assert staged.facts["paths"] == ["lib.py"]
    by_path = call(ctx, "git_diff", path="lib.py")
    assert by_path.data["output"] == ""
    assert by_path.data["message"] == "No unstaged changes."


def test_workspace_in_a_subdirectory_sees_only_itself(tmp_path: Path) -> None:
    repo = make_repo(tmp_path / "repo")
    (repo / "pkg").mkdir()
    (repo / "pkg" / "mod.py").write_text("a = 1\n")
    sh(repo, "git", "add", ".")
    sh(repo, "git", "commit", "-qm", "pkg")
    (repo / "pkg" / "mod.py").write_text("a = 2\n")
    (repo / "a.txt").write_text("outside the workspace\n")
    ctx = ctx_for(repo / "pkg")
    status = call(ctx, "git_status")
    assert status.facts["paths"] == ["mod.py"]
    diff = call(ctx, "git_diff")
    assert diff.facts["paths"] == ["mod.py"]
    assert "outside the workspace" not in diff.data["output"]


@pytest.mark.parametrize("path", ["../outside", "/etc/passwd", "link/x"])
def test_diff_path_outside_workspace_is_refused(tmp_path: Path, path: str) -> None:
    repo = make_repo(tmp_path / "repo")
    (repo / "link").symlink_to(tmp_path)
    result = call(ctx_for(repo), "git_diff", path=path)
    assert result.data["ok"] is False
    assert "outside the workspace" in result.data["error"]


def test_not_a_repository(tmp_path: Path) -> None:
    plain = tmp_path / "plain"
    plain.mkdir()
    for tool in ("git_status", "git_diff"):
        result = call(ctx_for(plain), tool)
        assert result.data["ok"] is False
        assert "not a git repository;" in result.data["error"]


@pytest.mark.skipif(os.geteuid() != 0, reason="changing a repository's owner needs root")
def test_repository_owned_by_another_user(tmp_path: Path) -> None:
    repo = make_repo(tmp_path / "theirs")
    for dirpath, _dirs, files in os.walk(repo):
        os.chown(dirpath, 12345, 12345)
        for name in files:
            os.chown(os.path.join(dirpath, name), 12345, 12345)
    result = call(ctx_for(repo), "git_status")
    assert result.data["ok"] is False
    assert "safe.directory" in result.data["error"]
    assert "another user" in result.data["error"]


def test_diff_output_is_redacted_and_capped(tmp_path: Path) -> None:
    repo = make_repo(tmp_path / "repo")
    secret = "AKIA" + "QWERTYUIOPASDFGH"
    (repo / "a.txt").write_text(f"aws={secret}\n" + "".join(f"line {i}\n" for i in range(30000)))
    result = call(ctx_for(repo), "git_diff")
    assert secret not in result.to_message()
    assert "[REDACTED]" in result.data["output"]
    assert result.data["omitted_bytes"] > 0
    assert result.data["output"].endswith("+line 29999\n")
    assert len(result.data["output"]) < 200_000


# --- hostile repositories ----------------------------------------------------------------------------

@dataclass(frozen=True)
class Attack:
    """A planted command, how to plant it, and the plain git call that runs it."""

    plant: Callable[[Path, Path], None]
    control: tuple[str, ...]
    dirty: Callable[[Path], None]


def _config(repo: Path, key: str, value: str) -> None:
    sh(repo, "git", "config", key, value)


def _plant_fsmonitor(repo: Path, mark: Path) -> None:
    _config(repo, "core.fsmonitor", f"touch {mark}; false")


def _plant_clean_filter(repo: Path, mark: Path) -> None:
    _config(repo, "filter.evil.clean", f"touch {mark}; cat")
    (repo / ".gitattributes").write_text("*.txt filter=evil\n")


def _plant_process_filter(repo: Path, mark: Path) -> None:
    _config(repo, "filter.proc.process", f"touch {mark}; false")
    (repo / ".git" / "info").mkdir(exist_ok=True)
    (repo / ".git" / "info" / "attributes").write_text("*.txt filter=proc\n")


def _plant_included_filter(repo: Path, mark: Path) -> None:
    # A name with '=' cannot be overridden with `-c filter.x=y.clean=`; it must still be neutralised.
    (repo / ".git" / "extra.cfg").write_text(f'[filter "x=y"]\n\tclean = touch {mark}; cat\n')
    _config(repo, "include.path", "extra.cfg")
    (repo / ".gitattributes").write_text("*.txt filter=x=y\n")


def _plant_external_diff(repo: Path, mark: Path) -> None:
    _config(repo, "diff.external", f"sh -c 'touch {mark}'")


def _plant_textconv(repo: Path, mark: Path) -> None:
    _config(repo, "diff.drv.textconv", f"touch {mark}; cat")
    (repo / ".gitattributes").write_text("*.txt diff=drv\n")


def _plant_hook(repo: Path, mark: Path) -> None:
    hook = repo / ".git" / "hooks" / "post-index-change"
    hook.write_text(f"#!/bin/sh\ntouch {mark}\n")
    hook.chmod(0o755)


def _modify(repo: Path) -> None:
    (repo / "a.txt").write_text("one\nchanged\n")


ATTACKS: dict[str, Attack] = {
    "core.fsmonitor": Attack(_plant_fsmonitor, ("git", "status"), make_stat_dirty),
    "clean filter (fsmonitor off, no ext diff, no textconv)": Attack(
        _plant_clean_filter, ("git", "-c", "core.fsmonitor=false", "diff", "--no-ext-diff", "--no-textconv"),
        _modify),
    "process filter in info/attributes": Attack(_plant_process_filter, ("git", "status"), make_stat_dirty),
    "filter named x=y defined through include.path": Attack(_plant_included_filter, ("git", "status"), make_stat_dirty),
    "diff.external": Attack(_plant_external_diff, ("git", "diff"), _modify),
    "textconv driver": Attack(_plant_textconv, ("git", "diff"), _modify),
    "post-index-change hook": Attack(_plant_hook, ("git", "status"), make_stat_dirty),
}


@pytest.mark.parametrize("attack", list(ATTACKS.values()), ids=list(ATTACKS))
def test_hostile_repository_runs_nothing(tmp_path: Path, attack: Attack) -> None:
    repo = make_repo(tmp_path / "repo")
    mark = tmp_path / "PWNED"
    attack.plant(repo, mark)
    attack.dirty(repo)
    sh(repo, *attack.control)
    assert mark.exists(), "positive control: plain git should have run the planted command"
    mark.unlink()
    attack.dirty(repo)
    ctx = ctx_for(repo)
    for tool, arguments in (("git_status", {}), ("git_diff", {}), ("git_diff", {"staged": True}),
                            ("git_diff", {"path": "a.txt"})):
        result = call(ctx, tool, **arguments)
        assert result.data["ok"] is True, result.data
        assert not mark.exists(), f"{tool} {arguments} ran the planted command"


def test_hostile_submodule_runs_nothing(tmp_path: Path) -> None:
    inner = make_repo(tmp_path / "inner")
    outer = make_repo(tmp_path / "outer")
    sh(outer, "git", "-c", "protocol.file.allow=always", "submodule", "add", "-q", str(inner), "sub")
    sh(outer, "git", "commit", "-qm", "add sub")
    sub = outer / "sub"
    mark = tmp_path / "PWNED"
    _config(sub, "core.fsmonitor", f"touch {mark}; false")
    _plant_clean_filter(sub, mark)
    _modify(sub)
    sh(outer, "git", "status")
    assert mark.exists(), "positive control: plain git status recurses into the submodule"
    mark.unlink()
    _modify(sub)
    ctx = ctx_for(outer)
    assert call(ctx, "git_status").data["ok"] is True
    assert call(ctx, "git_diff").data["ok"] is True
    assert not mark.exists()


def test_every_neutralized_key_overrides_repository_config(tmp_path: Path) -> None:
    repo = make_repo(tmp_path / "repo")
    _config(repo, "core.pager", "touch /nonexistent; less")
    _config(repo, "filter.evil.clean", "false")
    safe = git.SafeGit(ctx_for(repo))
    seen = sh(repo, "git", "config", "--get", "core.pager")
    assert seen.stdout.strip().startswith("touch")
    effective = subprocess.run(["git", "config", "--get", "core.pager"], cwd=repo, env=safe.env,
                               capture_output=True, text=True, check=False)
    assert effective.stdout.strip() == "cat"
    clean = subprocess.run(["git", "config", "--get", "filter.evil.clean"], cwd=repo, env=safe.env,
                           capture_output=True, text=True, check=False)
    assert clean.stdout.strip() == ""


def test_tool_metadata_matches_the_contract() -> None:
    tools = {tool.name: tool for tool in REGISTRY}
    assert set(tools) == {"git_status", "git_diff"}
    for tool in tools.values():
        assert tool.is_parallel_safe({}) and tool.read_only
        assert tool.tags == frozenset({"git"})
    assert set(tools["git_diff"].schema()["function"]["parameters"]["properties"]) == {"path", "staged"}
    assert tools["git_status"].schema()["function"]["parameters"]["additionalProperties"] is False
