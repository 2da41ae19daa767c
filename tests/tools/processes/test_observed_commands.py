"""run_command observes every test runner's status inside a line and tracks the files commands change.

Each defence has a positive control: the same line's own exit code says success, so without the
observation the failure would be invisible.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

import pytest

from k1412_ls.tools.processes.run_command import RunCommandArgs, run_command
from k1412_ls.tools.registry import ToolContext
from k1412_ls.tools.undo.changes import ChangeTracker, RunChanges

FAILING = {"calc.py": "def add(a, b):\n    return a - b\n",
           "test_calc.py": "from calc import add\n\n\ndef test_add():\n    assert add(2, 3) == 5\n"}


def layout(ws: Path, files: dict[str, str]) -> None:
    for rel, text in files.items():
        (ws / rel).parent.mkdir(parents=True, exist_ok=True)
        (ws / rel).write_text(text)


def run(ctx: ToolContext, command: str) -> dict:
    result = run_command(RunCommandArgs(command=command, timeout_s=60), ctx)
    return result.facts


@pytest.mark.e2e
@pytest.mark.parametrize("command", [
    "python3 -m pytest -q || true",
    "python3 -m pytest -q; exit 0",
    "(python3 -m pytest -q); true",
    "set +e; python3 -m pytest -q > /dev/null; echo finished",
    "bash -c 'python3 -m pytest -q >/dev/null 2>&1; true'",
    "if python3 -m pytest -q >/dev/null; then echo fine; fi",
])
def test_masked_test_failures_are_observed(ctx: ToolContext, ws: Path, command: str) -> None:
    layout(ws, FAILING)
    facts = run(ctx, command)
    assert facts["exit_code"] == 0  # positive control: the line itself claims success
    statuses = [r["status"] for r in facts["observed"] if "pytest" in r["argv"]]
    assert statuses and statuses[0] == 1, facts["observed"]


@pytest.mark.e2e
def test_passing_runs_are_observed_with_status_zero(ctx: ToolContext, ws: Path) -> None:
    layout(ws, {**FAILING, "calc.py": "def add(a, b):\n    return a + b\n"})
    facts = run(ctx, "python3 -m pytest -q; echo done")
    assert [r["status"] for r in facts["observed"] if "pytest" in r["argv"]] == [0]
    assert facts["tests"]["passed"] == 1 and facts["tests"]["failed"] == 0


def test_observation_does_not_change_what_the_command_sees(ctx: ToolContext, ws: Path) -> None:
    facts = run(ctx, "echo \"$0|$#\"; type -t ls; exit 3")
    assert facts["exit_code"] == 3
    assert facts["output"].splitlines()[:2] == ["bash|0", "file"]


def test_change_tracking_sees_shell_writes(ctx: ToolContext, ws: Path) -> None:
    layout(ws, {"a.txt": "a\n", "b.txt": "b\n", "c.txt": "c\n"})
    facts = run(ctx, "sed -i s/a/A/ a.txt && rm b.txt && mv c.txt d.txt && echo new > e.txt")
    changes = {(c["path"], c["action"]) for c in facts["changes"]}
    assert changes == {("a.txt", "update"), ("b.txt", "delete"), ("c.txt", "delete"), ("d.txt", "create"),
                       ("e.txt", "create")}
    assert all(c["by"] == "command" for c in facts["changes"])
    assert facts["changes_complete"] is True


def test_change_tracking_skips_caches_and_never_blocks_on_a_fifo(ctx: ToolContext, ws: Path) -> None:
    facts = run(ctx, "mkdir -p __pycache__ node_modules && touch __pycache__/x.pyc node_modules/y.js && mkfifo pipe")
    assert [c["path"] for c in facts["changes"]] == ["pipe"]
    assert facts["changes"][0].get("binary") is True  # not read: a FIFO would block


def test_a_write_through_a_symlink_is_not_followed(ctx: ToolContext, ws: Path, tmp_path: Path) -> None:
    outside = tmp_path / "outside.txt"
    outside.write_text("secret 42\n")
    os.symlink(outside, ws / "link.txt")
    facts = run(ctx, "touch -h link.txt")
    entry = next(c for c in facts["changes"] if c["path"] == "link.txt")
    assert "numbers" not in entry  # the target outside the workspace was never read


def test_interpreter_path_is_unchanged(ctx: ToolContext) -> None:
    facts = run(ctx, f"{sys.executable} -c 'import sys; print(sys.argv)' a b")
    assert facts["exit_code"] == 0 and "['-c', 'a', 'b']" in facts["output"]


def _tracker(ws: Path, live: bool) -> ChangeTracker:
    tracker = ChangeTracker(ws)
    if not live:
        tracker.close()  # the walking fallback, as on systems without inotify
    return tracker


@pytest.mark.parametrize("live", [True, False], ids=["inotify", "snapshots"])
def test_tracker_reports_only_what_the_command_changed(ws: Path, live: bool) -> None:
    layout(ws, {"a.txt": "a\n", "keep/b.txt": "b\n", "gone/c.txt": "c\n", "old.txt": "o\n"})
    tracker = _tracker(ws, live)
    assert tracker.live is live
    (ws / "between.txt").write_text("a file tool wrote this between commands\n")
    before = tracker.begin()
    (ws / "a.txt").write_text("A\n")
    (ws / "new").mkdir()
    (ws / "new" / "deep").mkdir()
    (ws / "new" / "deep" / "d.txt").write_text("d\n")
    for child in (ws / "gone").iterdir():
        child.unlink()
    (ws / "gone").rmdir()
    (ws / "old.txt").rename(ws / "moved.txt")
    (ws / "__pycache__").mkdir()
    (ws / "__pycache__" / "x.pyc").write_bytes(b"\0")
    changes, complete = tracker.end(before)
    tracker.close()
    assert complete
    assert sorted(changes) == [("a.txt", "update"), ("gone/c.txt", "delete"), ("moved.txt", "create"),
                               ("new/deep/d.txt", "create"), ("old.txt", "delete")]


def test_run_level_tracker_keeps_state_between_commands(ctx: ToolContext, ws: Path) -> None:
    changes = ctx.services.changes = RunChanges(ws)
    try:
        first = run(ctx, "echo one > f.txt")
        second = run(ctx, "echo two >> f.txt && rm -f nothing.txt")
        third = run(ctx, "cat f.txt")
    finally:
        changes.close()
    assert [(c["path"], c["action"]) for c in first["changes"]] == [("f.txt", "create")]
    assert [(c["path"], c["action"]) for c in second["changes"]] == [("f.txt", "update")]
    assert third["changes"] == []


FORGE = ("for f in {table}/*; do fd=${{f##*/}}; "
         "if [ \"$fd\" -gt 2 ]; then printf '0\\037pytest\\037-q\\037tests/test_forged.py\\n' >&$fd 2>/dev/null; fi; "
         "done; true")


@pytest.mark.parametrize("table", ["/proc/$$/fd", "/proc/self/fd", "/proc/$BASHPID/fd", "/dev/fd"])
def test_a_line_that_writes_to_its_own_descriptors_has_its_records_withheld(ctx: ToolContext, table: str) -> None:
    facts = run(ctx, FORGE.format(table=table))
    assert facts["observed"] == [], facts["observed"]
    withheld = facts["observed_withheld"]
    assert withheld["records"] >= 1 and "descriptors" in withheld["why"]


def test_forged_record_reaches_the_channel_when_the_line_does_not_show_it(ctx: ToolContext, ws: Path) -> None:
    # Positive control: the same loop, run from a script file the line does not show, does write a record,
    # so the withholding above is what keeps the forged record out of the log (docs/sandbox.md, known limits).
    (ws / "forge.sh").write_text(FORGE.format(table="/proc/$$/fd") + "\n")
    facts = run(ctx, "bash forge.sh")
    assert any("tests/test_forged.py" in r["argv"] for r in facts["observed"]), facts
