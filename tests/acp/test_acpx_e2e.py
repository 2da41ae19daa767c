"""`k1412 acp` driven by a real, independent ACP client: the npm CLI `acpx` (headless, installed from the
registry into ~/.cache/k1412-acpx by .ci/run, or $K1412_ACPX). Its ``--format json`` output is every
JSON-RPC message both ways, which is what these tests read.

One persistent acpx session: an edit-and-test task (the verdict in ``_meta``, a diff per write, writes
through the client's ``fs/write_text_file``, usage updates, a network command allowed once); the next
prompt after acpx restarted the agent (``session/load``) with the same command rejected; then a
command cancelled with ``acpx cancel`` (no process left, stopReason ``cancelled``).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest

from k1412_ls.tools.sandbox.command_sandbox import bubblewrap
from tests.conftest import write_config
from tests.support.acp_client import RoutedModel, agent_env

ACPX = Path(os.environ.get("K1412_ACPX") or Path.home() / ".cache" / "k1412-acpx" / "node_modules" / ".bin" / "acpx")

pytestmark = [
    pytest.mark.e2e,
    pytest.mark.skipif(not ACPX.is_file(), reason=f"acpx is not installed at {ACPX} (npm install --prefix "
                                                  f"~/.cache/k1412-acpx acpx, as .ci/run does)"),
    pytest.mark.skipif(not bubblewrap().active, reason="bubblewrap is not usable here"),
]

CALC = "def add(a, b):\n    return a + b\n"
TEST = "from calc import add\n\n\ndef test_add():\n    assert add(2, 3) == 5\n"
NETWORK = "curl -s -o /dev/null http://127.0.0.1:9/ ; echo tried"
SLEEP = "sleep 71.3141"


class Acpx:
    def __init__(self, tmp_path: Path, model: RoutedModel) -> None:
        self.ws = tmp_path / "ws"
        self.ws.mkdir()
        home = tmp_path / "home"
        home.mkdir()
        config = write_config(home / "config.toml", model.base_url)
        self.env = agent_env(home) | {"HOME": str(home)}  # acpx keeps its sessions under $HOME/.acpx
        agent = f"{sys.executable} -m k1412_ls.cli acp --config {config}"
        self.base = [str(ACPX), "--agent", agent, "--cwd", str(self.ws), "--format", "json", "--timeout", "90"]

    def command(self, *args: str, policy: str = "--approve-all") -> subprocess.CompletedProcess[str]:
        return subprocess.run([*self.base, policy, *args], env=self.env, capture_output=True, text=True,
                              timeout=150)

    def start(self, *args: str) -> subprocess.Popen[str]:
        return subprocess.Popen([*self.base, "--approve-all", *args], env=self.env, stdout=subprocess.PIPE,
                                stderr=subprocess.PIPE, text=True)


def messages(stdout: str) -> list[dict[str, Any]]:
    found = []
    for line in stdout.splitlines():
        try:
            message = json.loads(line)
        except ValueError:
            continue
        if isinstance(message, dict) and message.get("jsonrpc") == "2.0":
            found.append(message)
    return found


def prompt_result(wire: list[dict[str, Any]]) -> dict[str, Any]:
    results = [m["result"] for m in wire if isinstance(m.get("result"), dict) and "stopReason" in m["result"]]
    assert len(results) == 1, wire
    return results[0]


def answer_to(wire: list[dict[str, Any]], request: dict[str, Any]) -> dict[str, Any]:
    """The client's reply to one request of the agent (ids of the two directions overlap: take the next one)."""
    after = wire[wire.index(request) + 1:]
    return next(m["result"] for m in after if m.get("id") == request["id"] and "method" not in m and "result" in m)


def updates(wire: list[dict[str, Any]], kind: str) -> list[dict[str, Any]]:
    return [m["params"]["update"] for m in wire if m.get("method") == "session/update"
            and m["params"]["update"].get("sessionUpdate") == kind]


def sleepers() -> list[str]:
    return subprocess.run(["pgrep", "-f", SLEEP], capture_output=True, text=True).stdout.split()


def test_acpx_runs_loads_asks_and_cancels(tmp_path: Path) -> None:
    model = RoutedModel()
    model.add("Make add", [
        {"tool_calls": [{"name": "write_file", "arguments": {"path": "calc.py", "content": CALC}},
                        {"name": "write_file", "arguments": {"path": "test_calc.py", "content": TEST}}]},
        {"tool_calls": [{"name": "run_command", "arguments": {"command": "python3 -m pytest -q"}}]},
        {"tool_calls": [{"name": "run_command", "arguments": {"command": NETWORK}}]},
        {"content": "calc.add adds; python3 -m pytest -q: 1 passed."},
    ])
    model.add("try the port again", [
        {"tool_calls": [{"name": "run_command", "arguments": {"command": NETWORK}}]},
        {"content": "The port was not tried: the command was denied.", "repeat": True},
    ])
    model.add("wait for a while", [
        {"tool_calls": [{"name": "run_command", "arguments": {"command": SLEEP, "timeout_s": 120}}]},
        {"content": "Waited.", "repeat": True},
    ])
    acpx = Acpx(tmp_path, model)
    try:
        created = acpx.command("sessions", "new")
        assert created.returncode == 0, created.stderr

        first = acpx.command("prompt", "Make add in calc.py add its arguments, test it and check the local port")
        wire = messages(first.stdout)
        result = prompt_result(wire)
        verdict = result["_meta"]["k1412"]["verdict"]
        assert result["stopReason"] == "end_turn"
        assert verdict["status"] == "completed", verdict
        assert all(item["met"] for item in verdict["contract"]) and verdict["contract"]
        assert (acpx.ws / "calc.py").read_text() == CALC and (acpx.ws / "test_calc.py").read_text() == TEST
        writes = [m for m in wire if m.get("method") == "fs/write_text_file"]
        assert sorted(Path(m["params"]["path"]).name for m in writes) == ["calc.py", "test_calc.py"]
        diffs = [c for u in updates(wire, "tool_call_update") for c in u.get("content") or [] if c["type"] == "diff"]
        assert sorted(Path(d["path"]).name for d in diffs) == ["calc.py", "test_calc.py"]
        asked = [m for m in wire if m.get("method") == "session/request_permission"]
        assert len(asked) == 1 and "curl" in asked[0]["params"]["toolCall"]["title"]
        assert answer_to(wire, asked[0])["outcome"]["optionId"] == "allow_once"
        assert updates(wire, "usage_update")
        chunks = [u["content"]["text"] for u in updates(wire, "agent_message_chunk")]
        assert chunks[-1].startswith("K1412 verdict: completed")

        second = acpx.command("prompt", "Now try the port again", policy="--deny-all")
        wire = messages(second.stdout)
        assert any(m.get("method") == "session/load" for m in wire)  # acpx restarted the agent
        # the conversation goes on in the restarted agent (acpx keeps its own copy of a loaded session's replay)
        later = [r["body"]["messages"] for r in model.chat_requests
                 if "try the port again" in str(r["body"]["messages"][-1].get("content"))
                 or any("try the port again" in str(m.get("content")) for m in r["body"]["messages"][-2:])]
        assert later and any(m["role"] == "user" and "Make add in calc.py" in str(m["content"]) for m in later[0])
        asked = [m for m in wire if m.get("method") == "session/request_permission"]
        assert len(asked) == 1
        assert answer_to(wire, asked[0])["outcome"].get("optionId") == "reject"
        events = [json.loads(line) for line in
                  Path(prompt_result(wire)["_meta"]["k1412"]["verdict"]["events_path"]).read_text().splitlines()]
        assert [e["payload"]["decision"] for e in events if e["type"] == "approval.decided"] == ["deny"]

        running = acpx.start("prompt", "Please wait for a while")
        for _ in range(300):
            if sleepers():
                break
            time.sleep(0.1)
        assert sleepers(), "the command never started"
        cancelled = acpx.command("cancel")
        assert cancelled.returncode == 0, cancelled.stderr
        out, _err = running.communicate(timeout=90)
        result = prompt_result(messages(out))
        assert result["stopReason"] == "cancelled"
        assert result["_meta"]["k1412"]["verdict"]["status"] == "cancelled"
        for _ in range(50):
            if not sleepers():
                break
            time.sleep(0.1)
        assert sleepers() == []
    finally:
        model.close()
