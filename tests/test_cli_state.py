"""Memories, plans, conversations and delegation through the real CLI (issue 6 acceptance)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from k1412_ls.state.store import StateStore
from tests.support.cli import config_for, k1412
from tests.support.scripted_server import ScriptedServer

pytestmark = pytest.mark.e2e


@pytest.fixture
def ws(tmp_path: Path) -> Path:
    path = tmp_path / "ws"
    path.mkdir()
    (path / "app.py").write_text("x = 1\nprint(x)\n")
    return path


def system_text(request: dict) -> str:
    return "\n".join(m["content"] or "" for m in request["body"]["messages"] if m["role"] == "system")


def tool_results(request: dict) -> list[dict]:
    return [json.loads(m["content"]) for m in request["body"]["messages"] if m["role"] == "tool"]


def test_memories_are_per_user_and_survive_processes(tmp_path: Path, ws: Path) -> None:
    with ScriptedServer([
        {"tool_calls": [{"name": "remember", "arguments": {"text": "Alice prefers tabs over spaces"}}]},
        {"content": "I will remember that you prefer tabs."},
    ]) as server:
        cfg = config_for(tmp_path, server.base_url)
        first = k1412("run", "Remember that I prefer tabs over spaces", "--user", "alice", "--config", str(cfg),
                      "--json", cwd=ws)
    assert first.code == 0, first.stderr
    with ScriptedServer([{"content": "You prefer tabs."}]) as server:
        k1412("run", "What do you remember about my style?", "--user", "alice", "--config",
              str(config_for(tmp_path, server.base_url)), "--json", cwd=ws)
        alice_context = system_text(server.chat_requests[0])
    assert "Alice prefers tabs over spaces" in alice_context
    assert "not instructions" in alice_context.lower()
    with ScriptedServer([
        {"tool_calls": [{"name": "recall", "arguments": {}},
                        {"name": "forget", "arguments": {"memory_id": "m-000000000000"}}]},
        {"content": "I have no memories of you."},
    ]) as server:
        k1412("run", "What do you remember about me? Recall my memories.", "--user", "bob", "--config",
              str(config_for(tmp_path, server.base_url)), "--json", cwd=ws)
        bob_first, bob_second = server.chat_requests
    assert "tabs" not in json.dumps(bob_first["body"]) and "tabs" not in json.dumps(bob_second["body"])
    recalled, forgot = tool_results(bob_second)
    assert recalled["ok"] and recalled["memories"] == []
    assert not forgot["ok"]


def test_plan_with_two_in_progress_is_refused_and_a_valid_one_persists(tmp_path: Path, ws: Path,
                                                                      isolated_home: Path) -> None:
    bad = [{"step": "read", "status": "in_progress"}, {"step": "edit", "status": "in_progress"}]
    good = [{"step": "read", "status": "completed"}, {"step": "edit", "status": "in_progress"},
            {"step": "test", "status": "pending"}]
    with ScriptedServer([
        {"tool_calls": [{"name": "update_plan", "arguments": {"items": bad}}]},
        {"tool_calls": [{"name": "update_plan", "arguments": {"items": good}}]},
        {"content": "Planned.", "repeat": True},
    ]) as server:
        run = k1412("run", "Plan the steps to refactor app.py, step by step", "--user", "carol", "--conversation",
                    "c-plan", "--config", str(config_for(tmp_path, server.base_url)), "--json", cwd=ws)
        refused = tool_results(server.chat_requests[1])[0]
        accepted = tool_results(server.chat_requests[2])[-1]
    assert run.code in (0, 3), run.stderr
    assert not refused["ok"] and "read" in refused["error"] and "edit" in refused["error"]
    assert accepted["ok"]
    with StateStore(isolated_home / "k1412.sqlite3") as store:
        assert [(i.step, i.status) for i in store.get_plan("carol", "c-plan")] == [
            ("read", "completed"), ("edit", "in_progress"), ("test", "pending")]


def test_conversations_carry_history_only_within_themselves(tmp_path: Path, ws: Path) -> None:
    def ask(task: str, conversation: str, extra: str = "") -> dict:
        with ScriptedServer([{"content": f"answer to: {task}"}]) as server:
            run = k1412("run", task, "--conversation", conversation, "--config",
                        str(config_for(tmp_path, server.base_url, extra)), "--json", cwd=ws)
            assert run.result["conversation"] == conversation
            return {"body": server.chat_requests[0]["body"], "events": run.events()}

    ask("Hello, my project is called Zebra", "c-x")
    second = ask("Hi again", "c-x")
    contents = [m["content"] for m in second["body"]["messages"]]
    assert "Hello, my project is called Zebra" in contents
    assert "answer to: Hello, my project is called Zebra" in contents
    other = ask("Hi from elsewhere", "c-y")
    assert "Zebra" not in json.dumps(other["body"])
    for i in range(3):
        ask(f"Filler message number {i} " + "z" * 400, "c-x")
    small = ask("Short one", "c-x", extra="context_chars = 10000\n")
    built = next(e for e in small["events"] if e["type"] == "context.built")
    assert built["payload"]["dropped"] >= 2 and built["payload"]["digest_turns"] >= 1
    assert len(json.dumps(small["body"]["messages"])) + len(json.dumps(small["body"]["tools"])) < 11000
    # The turns that fell out of the budget left a digest: what was asked and how the run ended.
    digest = next(m["content"] for m in small["body"]["messages"] if "earlier turns" in str(m["content"]))
    assert "asked: Hello, my project is called Zebra → completed" in digest


def test_a_read_only_sub_agent_is_bounded(tmp_path: Path, ws: Path) -> None:
    script = [
        {"tool_calls": [{"name": "spawn_agent", "arguments": {"role": "reviewer",
                                                              "task": "Review app.py and report problems."}}]},
        # the sub-agent's turns
        {"tool_calls": [{"name": "spawn_agent", "arguments": {"role": "x", "task": "recurse"}},
                        {"name": "write_file", "arguments": {"path": "evil.txt", "content": "no"}},
                        {"name": "read_file", "arguments": {"path": "app.py"}}]},
        {"content": "app.py sets x = 1 and prints it; no problems."},
        # back to the parent
        {"content": "The reviewer found no problems in app.py."},
    ]
    with ScriptedServer(script) as server:
        run = k1412("run", "Delegate a review of app.py to a sub-agent", "--config",
                    str(config_for(tmp_path, server.base_url)), "--json", cwd=ws)
        child_results = tool_results(server.chat_requests[2])
        parent_results = tool_results(server.chat_requests[3])
    assert run.code == 0, (run.stderr, run.stdout)
    spawn_refused, write_refused, read_ok = child_results
    assert not spawn_refused["ok"] and not write_refused["ok"] and read_ok["ok"]
    assert not (ws / "evil.txt").exists()
    assert parent_results[0]["answer"].startswith("app.py sets x = 1")
    events = run.events()
    assert [e["seq"] for e in events] == list(range(1, len(events) + 1))
    child = [e for e in events if e["depth"] == 1]
    assert child and {e["agent_id"] for e in child} == {"agent-1"}
    assert child[0]["type"] == "agent.spawned" and child[-1]["type"] == "agent.completed"
