"""``k1412 judge`` parsers and mapping, on small hand-written runs of each format.

Each test reads a run the way a user's file would be read and checks what the verdict says: the same
ledger and gate as a live run decide it, so these tests pin the mapping (what each step becomes).
"""

from __future__ import annotations

import json
from pathlib import Path

from k1412_ls.core.evidence.replay import recheck
from k1412_ls.judge.atif_export import to_atif
from k1412_ls.judge.claude_code import parse_atif, parse_claude_code
from k1412_ls.judge.command_writes import command_changes
from k1412_ls.judge.discovery import sniff
from k1412_ls.judge.mapping import map_run
from k1412_ls.judge.mini_swe_agent import parse_mini_swe_agent
from k1412_ls.judge.reading import judge_file
from k1412_ls.judge.terminal_capture import parse_terminal_capture
from k1412_ls.judge.verdicts import judge_run
from tests.support.foreign_runs import (
    FIX,
    GOOD_ACTIONS,
    PASSING_TESTS,
    TASK,
    claude_stream,
    observation,
    terminal_capture,
    write_mini,
)


def test_mini_swe_agent_run_that_fixed_and_tested_is_completed(tmp_path: Path) -> None:
    path = write_mini(tmp_path / "calc-1.traj.json", GOOD_ACTIONS)
    run = parse_mini_swe_agent(path)
    assert run.task == TASK  # the text in the template's slot, not the harness's instructions
    assert [s.command for s in run.steps][:3] == ["cat calc.py", FIX, PASSING_TESTS]
    assert run.root == "/repo" and run.submitted == ("calc.py",)
    judgement = judge_run(run)
    assert judgement.status == "completed", judgement.missing
    assert {"item": "artifact", "mark": "✓"} in judgement.contract


def test_mini_swe_agent_run_that_left_tests_failing_is_unverified(tmp_path: Path) -> None:
    actions = [*GOOD_ACTIONS[:2], (PASSING_TESTS, observation(1, "F..\n1 failed, 2 passed in 0.03s\n"))]
    judgement = judge_run(parse_mini_swe_agent(write_mini(tmp_path / "calc-2.traj.json", actions)))
    assert judgement.status == "unverified"
    assert any("failed" in line for line in judgement.missing)


def test_change_never_verified_after_it_is_unverified(tmp_path: Path) -> None:
    rewrite = "cat <<'EOF' > calc.py\ndef add(a, b):\n    return a + b\nEOF"
    actions = [GOOD_ACTIONS[0], (PASSING_TESTS, observation(0, "3 passed in 0.02s\n")), (rewrite, observation(0, ""))]
    judgement = judge_run(parse_mini_swe_agent(write_mini(tmp_path / "calc-3.traj.json", actions)))
    assert judgement.status == "unverified"
    assert any("calc.py was written but never verified" in line for line in judgement.missing)


def test_a_turn_without_exactly_one_action_ran_nothing(tmp_path: Path) -> None:
    path = write_mini(tmp_path / "calc-4.traj.json", GOOD_ACTIONS)
    data = json.loads(path.read_text())
    data["messages"].insert(2, {"role": "assistant", "content": "Two actions:\n```bash\nls\n```\n```bash\npwd\n```"})
    data["messages"].insert(3, {"role": "user", "content": "Please always provide EXACTLY ONE action."})
    path.write_text(json.dumps(data))
    # The refused turn ran nothing; the submit step's reply is the diff (the submission), not an observation.
    assert [s.command for s in parse_mini_swe_agent(path).steps] == [c for c, _ in GOOD_ACTIONS]


def test_a_diff_file_no_step_names_is_reported_not_counted(tmp_path: Path) -> None:
    diff = ("diff --git a/calc.py b/calc.py\n+x\ndiff --git a/setup.cfg b/setup.cfg\n+y\n")
    run = parse_mini_swe_agent(write_mini(tmp_path / "calc-5.traj.json", GOOD_ACTIONS, submission=diff))
    mapped = map_run(run)
    assert mapped.unread_changes == ("setup.cfg",)  # changed before the run began: not the run's change
    assert judge_run(run).status == "completed"


def test_a_diff_file_changed_by_an_unread_script_is_that_scripts_change(tmp_path: Path) -> None:
    diff = "diff --git a/calc.py b/calc.py\n+x\ndiff --git a/util.py b/util.py\n+y\n"
    actions = [*GOOD_ACTIONS, ("python tools/rewrite.py util.py", observation(1, "Traceback: half done\n"))]
    run = parse_mini_swe_agent(write_mini(tmp_path / "calc-6.traj.json", actions, submission=diff))
    events = map_run(run).events
    rewrite = next(e for e in events if e.type == "tool.completed" and "rewrite" in str(e.payload["args"]))
    assert [c["path"] for c in rewrite.payload["facts"]["changes"]] == ["util.py"]
    judgement = judge_run(run)
    assert judgement.status == "unverified"
    assert any("util.py was written but never verified" in line for line in judgement.missing)


def test_writes_are_read_from_the_command_text() -> None:
    root = "/repo"
    heredoc = "cd /repo && cat <<'EOF' > src/new.py\nprint(1)\nEOF"
    assert [(c.path, c.text) for c in command_changes(heredoc, root)] == [("src/new.py", "print(1)\n")]
    assert [c.path for c in command_changes("sed -i.bak -e 's/a/b/' a.py b.py", root)] == ["a.py", "b.py"]
    inline = "python - <<'EOF'\np = 'pkg/mod.py'\nwith open(p, 'w') as f:\n    f.write('x')\nopen('r.txt').read()\nEOF"
    assert [c.path for c in command_changes(inline, root)] == ["pkg/mod.py"]
    assert [(c.path, c.action) for c in command_changes("rm -f repro.py && mv a.py b.py", root)] == [
        ("repro.py", "delete"), ("b.py", "move")]
    assert command_changes("cat x.py > /dev/null; echo hi > /tmp/out.txt; grep -n add calc.py", root) == []
    assert [c.path for c in command_changes("echo hi | tee /repo/log.txt", root)] == ["log.txt"]


def test_terminal_capture_is_cleaned_unwrapped_and_read(tmp_path: Path) -> None:
    path = tmp_path / "agent.log"
    path.write_text(terminal_capture(width=80), encoding="utf-8")
    assert sniff(path) == "terminal-bench"
    run = parse_terminal_capture(path)
    assert run.task == "Create hello.txt containing hi" and run.root == "/app"
    commands = [s.command for s in run.steps]
    assert commands[:2] == ["echo hi > hello.txt", "cat hello.txt"]
    assert commands[2] == "python3 -c \"print('" + "x" * 90 + "')\""  # the wrapped line joined back
    assert run.final_message.startswith("hello.txt holds hi")
    assert judge_run(run).status == "completed"


def test_terminal_capture_where_the_agent_never_started_is_unverified(tmp_path: Path) -> None:
    path = tmp_path / "agent.log"
    path.write_text("root@box:/app# mini -m m -t 'Create hello.txt containing hi' -y\nbash: mini: command not found\n")
    run = parse_terminal_capture(path)
    assert run.steps == [] and run.task == "Create hello.txt containing hi"
    judgement = judge_run(run)
    assert judgement.status == "unverified" and judgement.steps == 0


def test_claude_code_stream_maps_tools_and_names_what_it_cannot(tmp_path: Path) -> None:
    calls = [
        ("Write", {"file_path": "/work/app.py", "content": "print('ok')\n"}, "File created", False),
        ("Bash", {"command": "python app.py"}, "Exit code 1\nTraceback: boom", True),
        ("Task", {"prompt": "look around"}, "done", False),
        ("Bash", {"command": "python app.py"}, "ok", False),
        ("TodoWrite", {"todos": []}, "ok", False),
    ]
    path = tmp_path / "claude-code.txt"
    path.write_text(claude_stream(calls, "app.py prints ok."), encoding="utf-8")
    (tmp_path / "command-1.txt").write_text("claude --output-format stream-json -p 'Write app.py that prints ok'")
    assert sniff(path) == "claude-code"
    run = parse_claude_code(path)
    assert run.task == "Write app.py that prints ok" and run.root == "/work"
    assert [(s.kind, s.exit_code) for s in run.steps if s.kind == "command"] == [("command", 1), ("command", 0)]
    judgement = judge_run(run)
    assert judgement.status == "completed", judgement.missing
    assert judgement.unmapped == {"Task": 1} and judgement.mapped == 4


def test_an_unmapped_step_never_becomes_evidence(tmp_path: Path) -> None:
    # The only change and its check happen through tools the mapping does not know.
    calls = [("NotebookEdit", {"notebook_path": "/work/app.py"}, "edited", False),
             ("WebFetch", {"url": "http://127.0.0.1/"}, "it works", False)]
    path = tmp_path / "claude-code.txt"
    path.write_text(claude_stream(calls, "Wrote app.py; it works."), encoding="utf-8")
    judgement = judge_run(parse_claude_code(path), task="Write app.py that prints ok")
    assert judgement.status == "unverified" and judgement.mapped == 0
    assert judgement.unmapped == {"NotebookEdit": 1, "WebFetch": 1}


def test_a_k1412_run_exported_as_atif_reads_back_to_the_same_verdict(tmp_path: Path) -> None:
    path = write_mini(tmp_path / "calc-7.traj.json", GOOD_ACTIONS)
    events = map_run(parse_mini_swe_agent(path)).events
    assert recheck(events).complete
    atif = tmp_path / "trajectory.json"
    atif.write_text(json.dumps(to_atif(events)), encoding="utf-8")
    assert sniff(atif) == "atif"
    back = parse_atif(atif)
    assert back.task == TASK and [s.command for s in back.steps][:3] == [
        "cat calc.py", FIX.replace("/repo", "."), PASSING_TESTS.replace("/repo", ".")]
    assert judge_run(back).status == "completed"


def test_a_file_of_no_known_format_is_unreadable_with_a_reason(tmp_path: Path) -> None:
    path = tmp_path / "notes.json"
    path.write_text('{"hello": 1}')
    judgement = judge_file(path, sniff(path))
    assert judgement.status == "unreadable" and "not a run of any format" in judgement.error
    broken = tmp_path / "x.traj.json"
    broken.write_text("{not json")
    assert judge_file(broken, sniff(broken)).status == "unreadable"


def test_claude_code_background_commands_are_background_processes(tmp_path: Path) -> None:
    calls = [
        ("Write", {"file_path": "/work/server.py", "content": "print('serving')\n"}, "File created", False),
        ("Bash", {"command": "python server.py", "run_in_background": True},
         "Command running in background with ID: ab12", False),
        ("BashOutput", {"bash_id": "ab12"}, "<status>running</status>\n\n<stdout>\nserving\n</stdout>", False),
        ("KillShell", {"shell_id": "ab12"}, '{"message":"Successfully killed shell: ab12"}', False),
    ]
    path = tmp_path / "claude-code.txt"
    path.write_text(claude_stream(calls, "server.py runs and serves."), encoding="utf-8")
    run = parse_claude_code(path)
    assert [(s.kind, s.op) for s in run.steps[1:]] == [("process", "start"), ("process", "poll"), ("process", "cancel")]
    events = map_run(run).events
    polls = [e.payload for e in events if e.type == "tool.completed" and e.payload["tool"] == "process_poll"]
    assert polls[0]["facts"]["command"] == "python server.py" and polls[0]["facts"]["status"] == "running"
    judgement = judge_run(run, task="Write server.py and start it")
    assert judgement.status == "completed", judgement.missing
    assert judgement.unmapped == {}
    # Without the poll, nothing shows the server ran: the write stays unverified.
    unpolled = parse_claude_code(path)
    unpolled.steps = [s for s in unpolled.steps if s.op != "poll"]
    assert judge_run(unpolled, task="Write server.py and start it").status == "unverified"
