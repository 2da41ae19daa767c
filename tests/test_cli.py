"""The real ``k1412`` CLI end to end: exit codes, result object, event log, secrets, replay."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from tests.support.cli import config_for, k1412
from tests.support.scripted_server import ScriptedServer

pytestmark = pytest.mark.e2e

HELLO_TASK = "Create hello.py that prints hello world and run it"
HELLO_SCRIPT = [
    {"tool_calls": [{"name": "write_file", "arguments": {"path": "hello.py",
                                                         "content": "print('hello world')\n"}}]},
    {"tool_calls": [{"name": "run_command", "arguments": {"command": "python3 hello.py"}}]},
    {"content": "I created hello.py and ran it; it printed hello world."},
]


def test_hello_world_completes_with_a_faithful_log(tmp_path: Path, ws: Path) -> None:
    with ScriptedServer(HELLO_SCRIPT) as server:
        run = k1412("run", HELLO_TASK, "--config", str(config_for(tmp_path, server.base_url)), "--json", cwd=ws)
    assert run.code == 0, run.stderr
    result = run.result
    assert result["status"] == "completed" and result["files_changed"] == ["hello.py"]
    assert set(result) >= {"run_id", "status", "message", "evidence", "files_changed", "iterations", "usage",
                           "events_path"}
    assert (ws / "hello.py").read_text() == "print('hello world')\n"
    events = run.events()
    assert [e["seq"] for e in events] == list(range(1, len(events) + 1))
    assert {e["run_id"] for e in events} == {result["run_id"]}
    assert all(e["meta"] == {"policy": "agent-loop-v8", "scheduler": "safe-parallel-v1",
                             "context_policy": "recent-visible-v3", "sandbox": "sandbox-v6"} for e in events)
    assert "print('hello world')" not in Path(result["events_path"]).read_text()
    written = next(e for e in events if e["type"] == "tool.completed" and e["payload"]["tool"] == "write_file")
    assert written["payload"]["args"]["content"]["bytes"] == len("print('hello world')\n")


def test_claims_only_is_unverified_exit_3(tmp_path: Path, ws: Path) -> None:
    with ScriptedServer([{"content": "Done, hello.py exists and works.", "repeat": True}]) as server:
        run = k1412("run", HELLO_TASK, "--config", str(config_for(tmp_path, server.base_url)), "--json", cwd=ws)
        requests = len(server.chat_requests)
    assert run.code == 3
    assert run.result["status"] == "unverified" and run.result["evidence"]["missing"]
    assert requests == 3


def test_chinese_artifact_request_without_tool_calls_is_unverified(tmp_path: Path, ws: Path) -> None:
    with ScriptedServer([{"content": "已经创建好了 data.csv。", "repeat": True}]) as server:
        run = k1412("run", "创建一个名为 data.csv 的文件", "--config", str(config_for(tmp_path, server.base_url)),
                    "--json", cwd=ws)
    assert run.code == 3 and run.result["status"] == "unverified"
    assert any("data.csv" in item for item in run.result["evidence"]["missing"])


def test_provider_500_fails_exit_4_quickly(tmp_path: Path, ws: Path) -> None:
    with ScriptedServer([{"status": 500, "body": {"error": {"message": "boom"}}, "repeat": True}]) as server:
        started = time.monotonic()
        run = k1412("run", HELLO_TASK, "--config", str(config_for(tmp_path, server.base_url)), "--json", cwd=ws)
    assert run.code == 4 and run.result["status"] == "failed"
    assert "500" in run.result["message"] and "\n" not in run.result["message"]
    assert run.events()[-1]["type"] == "run.failed"
    assert time.monotonic() - started < 30


def test_unset_key_variable_is_exit_2_naming_it(tmp_path: Path, ws: Path) -> None:
    cfg = config_for(tmp_path, "http://127.0.0.1:9/v1")
    cfg.write_text(cfg.read_text().replace("[providers.test]\n", '[providers.test]\napi_key_env = "K1412_TEST_KEY"\n'))
    env = {k: v for k, v in os.environ.items() if k != "K1412_TEST_KEY"}
    run = k1412("run", "hi", "--config", str(cfg), cwd=ws, env=env)
    assert run.code == 2 and "K1412_TEST_KEY" in run.stderr
    assert len(run.stderr.strip().splitlines()) == 1


def test_unknown_model_is_exit_2_listing_known_ids(tmp_path: Path, ws: Path) -> None:
    run = k1412("run", "hi", "--model", "gpt-99", cwd=ws)
    assert run.code == 2
    assert "gpt-99" in run.stderr and "deepseek-v4-pro" in run.stderr and "luna" in run.stderr


def test_keys_never_reach_events_or_child_environment(tmp_path: Path, ws: Path) -> None:
    provider_key = "sk-proj-PrOvIdEr_KeY-0123456789abcdefXYZ"
    planted = "sk-proj-PlAnTeD_sEcReT-9876543210zyxwvuTS"
    script = [
        {"tool_calls": [{"name": "write_file", "arguments": {"path": "notes.txt", "content": f"key={planted}\n"}}]},
        {"tool_calls": [{"name": "run_command", "arguments": {"command": "env > env.txt; cat notes.txt; env"}}]},
        {"content": f"I saw {planted} and saved the environment."},
    ]
    cfg = config_for(tmp_path, "")
    with ScriptedServer(script) as server:
        cfg = config_for(tmp_path, server.base_url)
        cfg.write_text(cfg.read_text().replace("[providers.test]\n",
                                               '[providers.test]\napi_key_env = "K1412_TEST_KEY"\n'))
        run = k1412("run", "Write notes.txt and show the environment", "--config", str(cfg), "--json", cwd=ws,
                    env={"K1412_TEST_KEY": provider_key})
        auth = [r["headers"].get("Authorization", "") for r in server.chat_requests]
    assert run.code in (0, 3), run.stderr
    log = Path(run.result["events_path"]).read_text()
    assert provider_key not in log and planted not in log
    assert provider_key not in run.stdout and planted not in run.stdout
    assert provider_key not in (ws / "env.txt").read_text()  # scrubbed from the command's environment
    assert all(provider_key in a for a in auth)  # while the provider did get it


def test_models_json_lists_builtins(ws: Path) -> None:
    run = k1412("models", "--json", cwd=ws)
    assert run.code == 0
    models = {m["id"]: m for m in json.loads(run.stdout)}
    ds = models["deepseek-v4-pro"]
    assert (ds["provider"], ds["thinking"], ds["reasoning_effort"]) == ("deepseek", True, "max")
    assert len({models[m]["provider_model"] for m in ("luna", "terra", "sol")}) == 3
    for model in models.values():
        assert set(model) >= {"id", "provider", "provider_model", "thinking", "thinking_label", "reasoning_effort",
                              "max_output_tokens", "max_iterations", "context_chars"}


def test_replay_renders_events_and_agrees(tmp_path: Path, ws: Path) -> None:
    with ScriptedServer(HELLO_SCRIPT) as server:
        run = k1412("run", HELLO_TASK, "--config", str(config_for(tmp_path, server.base_url)), "--json", cwd=ws)
    run_id = run.result["run_id"]
    text = k1412("replay", run_id, cwd=ws)
    assert text.code == 0 and "write_file" in text.stdout and "completed" in text.stdout
    report = json.loads(k1412("replay", run.result["events_path"], "--json", cwd=ws).stdout)
    assert report["recorded"] == "completed" and report["recomputed"] == "completed" and report["agrees"]
    missing = k1412("replay", "run-doesnotexist", cwd=ws)
    assert missing.code == 2 and "run-doesnotexist" in missing.stderr


def test_replay_of_a_v3_log_renders_and_names_its_rules(tmp_path: Path, ws: Path) -> None:
    """A log written under agent-loop-v3 (no observed statuses, no recorded targets) still replays."""
    with ScriptedServer(HELLO_SCRIPT) as server:
        run = k1412("run", HELLO_TASK, "--config", str(config_for(tmp_path, server.base_url)), "--json", cwd=ws)
    old = []
    for line in Path(run.result["events_path"]).read_text().splitlines():
        event = json.loads(line)
        event["meta"]["policy"] = "agent-loop-v3"
        event["payload"].pop("requirements", None)
        facts = event["payload"].get("facts")
        if isinstance(facts, dict):
            for key in ("observed", "changes", "changes_complete", "tests", "units"):
                facts.pop(key, None)
        old.append(json.dumps(event))
    v3 = tmp_path / "v3.jsonl"
    v3.write_text("\n".join(old) + "\n")
    text = k1412("replay", str(v3), cwd=ws)
    assert text.code == 0 and "write_file" in text.stdout
    assert "agent-loop-v3" in text.stdout and "agent-loop-v8" in text.stdout
    report = json.loads(k1412("replay", str(v3), "--json", cwd=ws).stdout)
    assert report["policy"] == "agent-loop-v3" and report["rechecked_with"] == "agent-loop-v8"
    assert report["recorded"] == "completed" and report["recomputed"] == "completed"


def test_tampered_log_disagrees_on_replay(tmp_path: Path, ws: Path) -> None:
    with ScriptedServer([{"content": "done", "repeat": True}]) as server:
        run = k1412("run", HELLO_TASK, "--config", str(config_for(tmp_path, server.base_url)), "--json", cwd=ws)
    path = Path(run.result["events_path"])
    lines = path.read_text().splitlines()
    last = json.loads(lines[-1])
    assert last["type"] == "run.unverified"
    last["type"], last["payload"]["status"] = "run.completed", "completed"  # claim success after the fact
    forged_path = tmp_path / "forged.jsonl"
    forged_path.write_text("\n".join([*lines[:-1], json.dumps(last)]) + "\n")
    report = json.loads(k1412("replay", str(forged_path), "--json", cwd=ws).stdout)
    assert report["recorded"] == "completed" and report["recomputed"] == "unverified" and not report["agrees"]


def test_ctrl_c_cancels_with_exit_130_and_kills_children(tmp_path: Path, ws: Path) -> None:
    marker = f"sleep 61.{os.getpid()}"  # a unique command line to look for
    script = [{"tool_calls": [{"name": "run_command", "arguments": {"command": f"{marker}; echo never"}}]}]
    with ScriptedServer(script) as server:
        cfg = config_for(tmp_path, server.base_url)
        proc = subprocess.Popen([sys.executable, "-m", "k1412_ls.cli", "run", "Run the slow job", "--config",
                                 str(cfg), "--json"], cwd=ws, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                text=True)
        deadline = time.monotonic() + 20
        while time.monotonic() < deadline:
            if subprocess.run(["pgrep", "-f", marker], capture_output=True).returncode == 0:
                break
            time.sleep(0.1)
        proc.send_signal(signal.SIGINT)
        out, err = proc.communicate(timeout=15)
    assert proc.returncode == 130, err
    result = json.loads(out)
    assert result["status"] == "cancelled"
    events = [json.loads(line) for line in Path(result["events_path"]).read_text().splitlines()]
    assert events[-1]["type"] == "run.cancelled"
    time.sleep(0.3)
    assert subprocess.run(["pgrep", "-f", marker], capture_output=True).returncode == 1


def test_premature_claim_is_rejected_then_proven_work_completes(tmp_path: Path, ws: Path) -> None:
    events_file = tmp_path / "copy.jsonl"
    with ScriptedServer([{"content": "Done already!"}, *HELLO_SCRIPT]) as server:
        run = k1412("run", HELLO_TASK, "--config", str(config_for(tmp_path, server.base_url)), "--json",
                    "--events", str(events_file), cwd=ws)
        recovery = server.chat_requests[1]["body"]["messages"][-1]
    assert run.code == 0 and run.result["status"] == "completed"
    assert recovery["role"] == "user" and "hello.py" in recovery["content"]
    rejected = [e for e in run.events() if e["type"] == "completion.rejected"]
    assert len(rejected) == 1 and rejected[0]["payload"]["missing"]
    # --events FILE receives exactly the run's log.
    assert events_file.read_text() == Path(run.result["events_path"]).read_text()


def test_live_progress_on_a_terminal(tmp_path: Path, ws: Path) -> None:
    import pty

    with ScriptedServer(HELLO_SCRIPT) as server:
        cfg = config_for(tmp_path, server.base_url)
        controller, terminal = pty.openpty()
        proc = subprocess.Popen([sys.executable, "-m", "k1412_ls.cli", "run", HELLO_TASK, "--config", str(cfg)],
                                cwd=ws, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=terminal, text=True)
        os.close(terminal)
        out, _ = proc.communicate(timeout=60)
        chunks = []
        while True:
            try:
                data = os.read(controller, 65536)
            except OSError:
                break
            if not data:
                break
            chunks.append(data)
        os.close(controller)
    progress = b"".join(chunks).decode()
    assert proc.returncode == 0
    assert "write_file hello.py" in progress and "run_command" in progress and "completed" in progress
    assert "status: completed" in out and "evidence" in out


def test_unusable_state_dir_is_one_line_exit_2(ws: Path) -> None:
    run = k1412("run", "hi", cwd=ws, env={"K1412_HOME": "/dev/null/k1412"})
    assert run.code == 2
    assert run.stderr.startswith("k1412: ") and len(run.stderr.strip().splitlines()) == 1
    assert "K1412_HOME" in run.stderr and "Traceback" not in run.stderr


@pytest.mark.parametrize("args", [["run", "   "], ["run", "x", "--workspace", "/nonexistent/ws"],
                                  ["replay", "/etc/hostname"], ["models", "--config", "/nonexistent.toml"]])
def test_bad_input_is_one_line_exit_2(ws: Path, args: list[str]) -> None:
    run = k1412(*args, cwd=ws)
    assert run.code == 2, run
    assert run.stderr.startswith("k1412: ") and len(run.stderr.strip().splitlines()) == 1
