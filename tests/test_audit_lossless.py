"""Audit never fails open, through the real ``k1412 run`` / ``replay`` / ``undo``.

Each poison once: a file name that is not UTF-8, every Unicode line separator and a non-UTF-8
byte in a command's output, a lone surrogate in the model's text and arguments, a log on a full
disk. Each test carries a control: the same input through the encoding K1412 used before (json
with raw non-ASCII, ``str.splitlines``), which is what broke the log.
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import pytest

from tests.support.cli import config_for, k1412
from tests.support.scripted_server import ScriptedServer

pytestmark = pytest.mark.e2e

POISON = b"poison-\xff\xfe.txt"  # what `touch $'poison-\xff\xfe.txt'` creates
KEPT = b"kept-\xfe.dat"  # a file the user had, whose name is not UTF-8
SEPARATORS = b"a\xe2\x80\xa8b\xe2\x80\xa9c\xc2\x85d\x1ce\x1df\x1eg\x0bh\x0ci\xffj"  # U+2028 U+2029 U+0085 \x1c-\x1e \v \f


def _old_line(value: Any) -> str:
    """An event line as K1412 wrote it before the record rule."""
    return json.dumps(value, ensure_ascii=False, separators=(",", ":"))


def _log(run_result: dict[str, Any]) -> tuple[bytes, list[dict[str, Any]]]:
    raw = Path(run_result["events_path"]).read_bytes()
    return raw, [json.loads(line) for line in raw.decode("utf-8").split("\n") if line]


def _run(tmp_path: Path, ws: Path, script: list[dict[str, Any]], *extra: str) -> Any:
    with ScriptedServer(script) as server:
        return k1412("run", "Delete README.md.", "--config", str(config_for(tmp_path, server.base_url)), "--json",
                     *extra, cwd=ws)


def test_a_file_name_that_is_not_utf8_is_logged_and_undo_restores_what_a_command_deleted(
        tmp_path: Path, ws: Path) -> None:
    (ws / "README.md").write_text("readme\n")
    with open(os.path.join(os.fsencode(ws), KEPT), "wb") as fh:
        fh.write(b"the user's bytes \xff\n")
    script = [
        {"tool_calls": [{"name": "run_command", "arguments": {"command": "touch $'poison-\\xff\\xfe.txt'"}}]},
        {"tool_calls": [{"name": "run_command", "arguments": {"command": "rm README.md kept-*.dat && ls"}}]},
        {"content": "Deleted README.md.", "repeat": True},
    ]
    run = _run(tmp_path, ws, script)  # the CLI's output decodes as UTF-8, or this raises
    assert run.code in (0, 3), run.stderr
    assert not (ws / "README.md").exists() and os.fsencode(POISON) in os.listdir(os.fsencode(ws))
    raw, events = _log(run.result)
    tools = [e["payload"] for e in events if e["type"] == "tool.completed"]
    assert [t["ok"] for t in tools] == [True, True], [t.get("error") for t in tools]
    assert "failed unexpectedly" not in raw.decode("utf-8")
    second = tools[1]
    assert os.fsencode(second["facts"]["output"]) == b"poison-\xff\xfe.txt\n"  # `ls` output: the name's exact bytes
    assert os.fsdecode(KEPT) in {c["path"] for c in second["facts"]["changes"]}
    state = Path(run.result["events_path"]).parent.parent
    manifest = json.loads((state / "undo" / "runs" / f"{run.result['run_id']}.json").read_text())
    with pytest.raises(UnicodeEncodeError):  # control: the old manifest writer choked on these names
        _old_line(manifest).encode("utf-8")

    undo = k1412("undo", run.result["run_id"], "--json", cwd=tmp_path)
    assert undo.code == 0, undo.stdout + undo.stderr
    assert set(undo.result["restored"]) == {"README.md", os.fsdecode(KEPT), os.fsdecode(POISON)}
    assert (ws / "README.md").read_text() == "readme\n"
    with open(os.path.join(os.fsencode(ws), KEPT), "rb") as fh:
        assert fh.read() == b"the user's bytes \xff\n"
    assert os.fsencode(POISON) not in os.listdir(os.fsencode(ws))  # the run created it: undo removes it
    human = k1412("undo", run.result["run_id"], cwd=tmp_path)
    assert "already undone" in human.stdout


def test_line_separators_and_raw_bytes_in_output_are_logged_exactly_and_replay_reads_the_log(
        tmp_path: Path, ws: Path) -> None:
    printf = "printf '" + "".join(f"\\x{b:02x}" for b in SEPARATORS) + "'"
    script = [{"tool_calls": [{"name": "run_command", "arguments": {"command": printf}}]},
              {"content": "Printed it.", "repeat": True}]
    run = _run(tmp_path, ws, script)
    raw, events = _log(run.result)
    assert raw.count(b"\n") == len(events) and raw.decode("utf-8")  # one record per line, valid UTF-8
    output = next(e["payload"]["facts"]["output"] for e in events if e["type"] == "tool.completed")
    assert os.fsencode(output) == SEPARATORS  # every byte, the \xff included
    assert len(raw.decode("utf-8").splitlines()) == len(events)  # no reader finds a line break inside
    old = _old_line({"output": SEPARATORS.decode("utf-8", "replace")})
    assert len(old.splitlines()) > 1  # control: the old encoding put line breaks inside one event

    replay = k1412("replay", run.result["run_id"], cwd=tmp_path)
    assert replay.code == 0, replay.stderr
    assert "recorded verdict:" in replay.stdout and "\u2028" not in replay.stdout and "\x1c" not in replay.stdout
    as_json = k1412("replay", run.result["run_id"], "--json", cwd=tmp_path)
    assert as_json.code == 0 and json.loads(as_json.stdout)["events"] == len(events)
    assert json.loads(as_json.stdout)["run_id"] == run.result["run_id"]


def test_a_lone_surrogate_in_the_model_text_and_arguments_keeps_the_run_logged(tmp_path: Path, ws: Path) -> None:
    (ws / "README.md").write_text("readme\n")
    script = [
        {"content": "Deleting \ud800 now.", "tool_calls": [
            {"name": "run_command", "arguments": {"command": "rm README.md # \udcff"}}]},
        {"content": "Again \udfff.", "tool_calls": [{"name": "run_command", "arguments": {"command": "rm README.md"}}]},
        {"content": "Deleted README.md \udfff.", "repeat": True},
    ]
    run = _run(tmp_path, ws, script)
    assert "disabled" not in run.stderr and run.stderr.strip() == "", run.stderr
    assert not (ws / "README.md").exists()
    _raw, events = _log(run.result)
    types = [e["type"] for e in events]
    assert "tool.completed" in types and types[-1].startswith("run.")  # logged to the end
    responded = [e["payload"] for e in events if e["type"] == "model.responded"]
    assert responded[0]["content"] == "Deleting \ud800 now." and responded[0]["ok"] is True
    assert responded[1]["ok"] is True  # the next request went out: the provider got the surrogate escaped
    started = next(e for e in events if e["type"] == "tool.started")
    assert started["payload"]["args"]["command"] == "rm README.md # \udcff"
    refused, ran = (e["payload"] for e in events if e["type"] == "tool.completed")
    assert refused["ok"] is False and "'command' input should be a valid string" in refused["error"]  # not run
    assert ran["ok"] is True and [(c["path"], c["action"]) for c in ran["facts"]["changes"]] == [("README.md", "delete")]
    with pytest.raises(UnicodeEncodeError):  # control: the old writer could not encode this event
        (_old_line(started) + "\n").encode("utf-8")
    assert json.loads(run.stdout)["run_id"] == run.result["run_id"]
    undo = k1412("undo", run.result["run_id"], "--json", cwd=tmp_path)
    assert undo.code == 0 and undo.result["restored"] == ["README.md"] and (ws / "README.md").exists()
    assert k1412("replay", run.result["run_id"], cwd=tmp_path).code == 0


def test_an_event_log_on_a_full_disk_stops_the_run_as_failed_before_any_command(tmp_path: Path, ws: Path) -> None:
    (ws / "README.md").write_text("readme\n")
    script = [{"tool_calls": [{"name": "run_command", "arguments": {"command": "rm README.md"}}]},
              {"content": "Deleted README.md.", "repeat": True}]
    control = tmp_path / "control"
    control.mkdir()
    (control / "README.md").write_text("readme\n")
    assert _run(tmp_path, control, script).code in (0, 3) and not (control / "README.md").exists()  # it would run

    run = _run(tmp_path, ws, script, "--events", "/dev/full")  # every write there fails with ENOSPC
    assert run.code == 4, run.stdout + run.stderr
    result = run.result
    assert result["status"] == "failed"
    assert result["message"].startswith("The run was stopped because the event log /dev/full could not record "
                                        "event 1 (run.created): No space left on device")
    assert "\n" not in result["message"] and result["message"].endswith("unrecorded.")
    assert (ws / "README.md").exists()  # nothing ran unrecorded
    _raw, events = _log(result)
    assert [e["type"] for e in events] == ["run.created", "run.failed"]
    assert events[-1]["payload"]["message"] == result["message"]
    replay = k1412("replay", result["run_id"], cwd=tmp_path)
    assert replay.code == 0 and "recorded verdict: failed" in replay.stdout
