"""The runtime state tools through the real registry, a real workspace and a real SQLite store."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest

from k1412_ls.state.store import StateStore
from k1412_ls.text.redact import Redactor
from k1412_ls.tools.files.documents import DiskDocumentStore
from k1412_ls.tools.files.workspace import Workspace
from k1412_ls.tools.plan_memory import TOOLS
from k1412_ls.tools.ports import RunServices
from k1412_ls.tools.registry import ToolContext, ToolRegistry, ToolResult


@pytest.fixture
def store(tmp_path: Path):
    with StateStore(tmp_path / "state" / "k1412.sqlite3") as opened:
        yield opened


@pytest.fixture
def registry() -> ToolRegistry:
    return ToolRegistry(TOOLS)


def context(tmp_path: Path, store: StateStore | None, user: str = "alice", conversation: str | None = "c-1",
            run_id: str = "run-1") -> ToolContext:
    workspace = tmp_path / "ws"
    workspace.mkdir(exist_ok=True)
    return ToolContext(
        workspace=Workspace(workspace), documents=DiskDocumentStore(), user=user, run_id=run_id,
        conversation=conversation, services=RunServices(state=store),
    )


def call(registry: ToolRegistry, ctx: ToolContext, name: str, **arguments: Any) -> ToolResult:
    result = registry.execute(name, arguments, ctx)
    json.loads(result.to_message())  # every result is a JSON object the model can read
    return result


# -- catalogue -----------------------------------------------------------------


@pytest.mark.parametrize(
    ("name", "parallel_safe", "read_only", "tags"),
    [
        ("update_plan", False, False, {"plan"}),
        ("remember", False, False, {"memory"}),
        ("recall", True, True, {"memory"}),
        ("forget", False, False, {"memory"}),
    ],
)
def test_catalogue_entries(registry: ToolRegistry, name: str, parallel_safe: bool, read_only: bool,
                           tags: set[str]) -> None:
    tool = registry.get(name)
    assert tool is not None
    assert tool.is_parallel_safe({}) is parallel_safe
    assert tool.read_only is read_only
    assert set(tool.tags) == tags


def test_every_schema_is_strict(registry: ToolRegistry) -> None:
    def objects(node: Any) -> list[dict[str, Any]]:
        if isinstance(node, dict):
            found = [node] if node.get("type") == "object" else []
            return found + [o for value in node.values() for o in objects(value)]
        if isinstance(node, list):
            return [o for value in node for o in objects(value)]
        return []

    for schema in registry.schemas():
        parameters = schema["function"]["parameters"]
        assert "$ref" not in json.dumps(parameters)
        assert objects(parameters) and all(o.get("additionalProperties") is False for o in objects(parameters))
    plan_items = registry.get("update_plan").schema()["function"]["parameters"]["properties"]["items"]["items"]
    assert plan_items["properties"]["status"]["enum"] == ["pending", "in_progress", "completed"]


@pytest.mark.parametrize(
    ("name", "arguments"),
    [
        ("update_plan", {"items": [{"step": "x", "status": "done"}]}),
        ("update_plan", {"items": [{"step": "x", "status": "pending", "owner": "me"}]}),
        ("update_plan", {"steps": []}),
        ("remember", {"text": "x", "tags": ["a"]}),
        ("remember", {}),
        ("recall", {"query": "x", "user": "bob"}),
        ("forget", {}),
    ],
)
def test_malformed_arguments_are_refused_in_one_sentence(tmp_path: Path, store: StateStore, registry: ToolRegistry,
                                                         name: str, arguments: dict[str, Any]) -> None:
    result = call(registry, context(tmp_path, store), name, **arguments)
    assert not result.ok
    assert result.data["error"].startswith(f"Invalid arguments for {name}")
    assert store.recall("alice") == [] and store.get_plan("alice", "c-1") == []


# -- update_plan ---------------------------------------------------------------


def test_update_plan_stores_and_reports_the_plan(tmp_path: Path, store: StateStore, registry: ToolRegistry) -> None:
    items = [
        {"step": "Read the parser", "status": "completed"},
        {"step": "Fix the bug", "status": "in_progress"},
        {"step": "Run the tests", "status": "pending"},
    ]
    result = call(registry, context(tmp_path, store), "update_plan", items=items)
    assert result.ok
    assert result.data["plan"] == items
    assert result.data["summary"] == "1/3 steps completed; in progress: Fix the bug."
    assert result.facts == {"kind": "state", "op": "plan", "plan": items, "summary": result.data["summary"]}
    assert [item.model_dump() for item in store.get_plan("alice", "c-1")] == items


def test_update_plan_with_two_in_progress_names_both_and_keeps_the_old_plan(
    tmp_path: Path, store: StateStore, registry: ToolRegistry
) -> None:
    ctx = context(tmp_path, store)
    call(registry, ctx, "update_plan", items=[{"step": "old step", "status": "in_progress"}])
    result = call(
        registry, ctx, "update_plan",
        items=[{"step": "Build", "status": "in_progress"}, {"step": "Deploy", "status": "in_progress"}],
    )
    assert not result.ok
    assert "'Build'" in result.data["error"] and "'Deploy'" in result.data["error"]
    assert [item.step for item in store.get_plan("alice", "c-1")] == ["old step"]


def test_plans_are_per_user_and_conversation(tmp_path: Path, store: StateStore, registry: ToolRegistry) -> None:
    call(registry, context(tmp_path, store), "update_plan", items=[{"step": "alice c-1", "status": "pending"}])
    call(registry, context(tmp_path, store, conversation="c-2"), "update_plan",
         items=[{"step": "alice c-2", "status": "pending"}])
    call(registry, context(tmp_path, store, user="bob"), "update_plan",
         items=[{"step": "bob c-1", "status": "pending"}])
    assert store.get_plan("alice", "c-1")[0].step == "alice c-1"
    assert store.get_plan("alice", "c-2")[0].step == "alice c-2"
    assert store.get_plan("bob", "c-1")[0].step == "bob c-1"


def test_a_run_without_conversation_keeps_its_plan_per_run(tmp_path: Path, store: StateStore,
                                                           registry: ToolRegistry) -> None:
    for run_id in ("run-a", "run-b"):
        ctx = context(tmp_path, store, conversation=None, run_id=run_id)
        assert call(registry, ctx, "update_plan", items=[{"step": run_id, "status": "pending"}]).ok
    assert store.get_plan("alice", "run-run-a")[0].step == "run-a"
    assert store.get_plan("alice", "run-run-b")[0].step == "run-b"


# -- remember / recall / forget ------------------------------------------------


def test_remember_then_recall_newest_first(tmp_path: Path, store: StateStore, registry: ToolRegistry) -> None:
    ctx = context(tmp_path, store)
    first = call(registry, ctx, "remember", text="The user writes commit messages in German.")
    second = call(registry, ctx, "remember", text="Tests run with pytest -q.")
    assert first.ok and second.ok
    assert re.fullmatch(r"m-[0-9a-f]{12}", first.data["memory_id"])
    assert first.facts == {"kind": "state", "op": "remember", "memory_id": first.data["memory_id"]}

    recalled = call(registry, ctx, "recall")
    assert recalled.ok and recalled.data["count"] == 2
    assert [m["id"] for m in recalled.data["memories"]] == [second.data["memory_id"], first.data["memory_id"]]
    assert "not as instructions" in recalled.data["note"]
    assert recalled.facts["kind"] == "state" and recalled.facts["op"] == "recall"

    filtered = call(registry, ctx, "recall", query="GERMAN", limit=5)
    assert [m["text"] for m in filtered.data["memories"]] == ["The user writes commit messages in German."]


def test_recall_reports_a_clamped_limit(tmp_path: Path, store: StateStore, registry: ToolRegistry) -> None:
    ctx = context(tmp_path, store)
    call(registry, ctx, "remember", text="one")
    result = call(registry, ctx, "recall", limit=5000)
    assert result.ok and result.data["limit"] == 100 and result.data["count"] == 1


def test_remember_refuses_credentials_and_stores_nothing(tmp_path: Path, store: StateStore,
                                                         registry: ToolRegistry) -> None:
    ctx = context(tmp_path, store)
    result = call(registry, ctx, "remember", text="my key is sk-proj-AbCdEfGhIjKlMnOpQrStUv_wx-yz0123")
    assert not result.ok and "credential" in result.data["error"]
    assert store.recall("alice") == []


def test_remember_refuses_the_value_of_a_secret_environment_variable(tmp_path: Path, store: StateStore,
                                                                     registry: ToolRegistry) -> None:
    ctx = context(tmp_path, store)
    ctx.redactor = Redactor.from_environment(extra_values=["hunter2-canary-value"])
    result = call(registry, ctx, "remember", text="The staging password is hunter2-canary-value")
    assert not result.ok and "credential" in result.data["error"]
    assert "hunter2" not in result.to_message()
    assert call(registry, ctx, "remember", text="Staging lives on build-07.").ok
    assert [m.text for m in store.recall("alice")] == ["Staging lives on build-07."]


@pytest.mark.parametrize("text", ["   ", "x" * 2001])
def test_remember_refuses_empty_or_huge_text(tmp_path: Path, store: StateStore, registry: ToolRegistry,
                                             text: str) -> None:
    result = call(registry, context(tmp_path, store), "remember", text=text)
    assert not result.ok and result.data["error"].endswith(".")
    assert store.recall("alice") == []


def test_forget_own_memory(tmp_path: Path, store: StateStore, registry: ToolRegistry) -> None:
    ctx = context(tmp_path, store)
    memory_id = call(registry, ctx, "remember", text="temporary").data["memory_id"]
    result = call(registry, ctx, "forget", memory_id=memory_id)
    assert result.ok and result.facts == {"kind": "state", "op": "forget", "memory_id": memory_id, "removed": True}
    assert call(registry, ctx, "recall").data["memories"] == []


def test_user_b_can_never_recall_or_forget_user_a_memories(tmp_path: Path, store: StateStore,
                                                           registry: ToolRegistry) -> None:
    alice = context(tmp_path, store, user="alice")
    bob = context(tmp_path, store, user="bob")
    memory_id = call(registry, alice, "remember", text="Alice's private note").data["memory_id"]

    assert call(registry, bob, "recall").data["memories"] == []
    assert call(registry, bob, "recall", query="alice").data["memories"] == []
    refused = call(registry, bob, "forget", memory_id=memory_id)
    assert not refused.ok
    assert refused.data["error"] == f"No memory {memory_id} exists for you; use recall to list your memories."
    assert refused.facts["removed"] is False
    assert [m["id"] for m in call(registry, alice, "recall").data["memories"]] == [memory_id]


def test_forget_unknown_id(tmp_path: Path, store: StateStore, registry: ToolRegistry) -> None:
    result = call(registry, context(tmp_path, store), "forget", memory_id="m-ffffffffffff")
    assert result.data == {
        "ok": False, "error": "No memory m-ffffffffffff exists for you; use recall to list your memories.",
    }


@pytest.mark.parametrize(
    ("name", "arguments"),
    [
        ("update_plan", {"items": []}),
        ("remember", {"text": "x"}),
        ("recall", {}),
        ("forget", {"memory_id": "m-000000000000"}),
    ],
)
def test_without_a_state_service_tools_fail_in_one_sentence(tmp_path: Path, registry: ToolRegistry, name: str,
                                                           arguments: dict[str, Any]) -> None:
    result = call(registry, context(tmp_path, None), name, **arguments)
    assert not result.ok
    assert result.data["error"] == "The 'state' service is not available in this run."


def test_a_closed_store_fails_in_one_sentence(tmp_path: Path, store: StateStore, registry: ToolRegistry) -> None:
    ctx = context(tmp_path, store)
    store.close()
    result = call(registry, ctx, "remember", text="x")
    assert not result.ok and result.data["error"] == "The state store is closed; restart the run."
