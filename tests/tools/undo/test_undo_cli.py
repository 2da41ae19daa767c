"""``k1412 undo`` through the real CLI: exit codes 0/1/2, the result object, the log, replay after undo."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.support.cli import config_for, k1412
from tests.support.scripted_server import ScriptedServer
from tests.tools.undo.test_undo import TASK, patch_create_delete, seed, tree

pytestmark = pytest.mark.e2e


def test_cli_undo_restores_a_run_then_refuses_a_user_edit_and_says_when_done(tmp_path: Path, ws: Path) -> None:
    seed(ws)
    before = tree(ws)
    with ScriptedServer(patch_create_delete()) as server:
        run = k1412("run", TASK, "--config", str(config_for(tmp_path, server.base_url)), "--json", cwd=ws)
    run_id = run.result["run_id"]
    assert (ws / "new.py").exists() and not (ws / "old.txt").exists()
    (ws / "new.py").write_text("print('the user kept working here')\n")

    first = k1412("undo", run_id, "--json", cwd=tmp_path)
    assert first.code == 1, first.stderr
    result = first.result
    assert set(result) >= {"ok", "run_id", "restored", "refused"}
    assert result["ok"] is False and result["run_id"] == run_id
    assert result["restored"] == ["data/conf.ini", "hello.py", "old.txt"]
    assert result["refused"] == [{"path": "new.py", "reason": "it was changed after the run (by you or another run)"}]
    assert (ws / "new.py").read_text() == "print('the user kept working here')\n"
    assert {k: v for k, v in tree(ws).items() if k != "new.py"} == before

    (ws / "new.py").write_text("print('new')\n")  # the user goes back to the run's version
    second = k1412("undo", run_id, cwd=tmp_path)
    assert second.code == 0, second.stdout + second.stderr
    assert "restored  new.py" in second.stdout and "not undone by design" in second.stdout
    assert tree(ws) == before

    third = k1412("undo", run_id, "--json", cwd=tmp_path)
    assert third.code == 1 and third.result["restored"] == [] and "already undone" in third.result["message"]

    log = [json.loads(line) for line in Path(run.result["events_path"]).read_text().splitlines()]
    undone = [e for e in log if e["type"] == "run.undone"]
    assert [len(e["payload"]["restored"]) for e in undone] == [3, 1]
    replay = k1412("replay", run_id, cwd=tmp_path)
    assert replay.code == 0 and "undone: 3 restored, 1 refused (cli)" in replay.stdout


def test_cli_undo_of_an_unknown_or_malformed_run_is_exit_2_in_one_sentence(tmp_path: Path) -> None:
    for run_id in ("run-0123456789abcdef", "../../x"):
        out = k1412("undo", run_id, cwd=tmp_path)
        assert out.code == 2
        assert out.stdout == "" and len(out.stderr.strip().splitlines()) == 1 and "Traceback" not in out.stderr
    assert not (tmp_path / "x").exists()
