"""ContextPolicy recent-visible-v1: one test per step of the policy."""

from __future__ import annotations

from k1412_ls.core.context import MEMORY_PREAMBLE, SYSTEM_CONTRACT, ContextPolicy

POLICY = ContextPolicy()


def test_step1_keeps_only_visible_roles() -> None:
    history = [
        {"role": "user", "content": "u1"},
        {"role": "tool", "content": "tool output", "tool_call_id": "x"},
        {"role": "assistant", "content": "a1", "tool_calls": [{"id": "x"}]},
        {"role": "function", "content": "f"},
        {"role": "developer", "content": "d1"},
    ]
    out = POLICY.prepare(history, "task", 100_000).messages
    assert [m["role"] for m in out[1:]] == ["user", "assistant", "developer", "user"]
    assert all("tool_calls" not in m for m in out)


def test_step2_strips_rendered_tool_call_blocks_from_assistant_messages() -> None:
    block = '<details type="tool_calls">\n<summary>write_file</summary>{"path": "a"}\n</details>\n'
    history = [{"role": "assistant", "content": f"Before.\n{block}After."},
               {"role": "user", "content": f"user keeps {block}"}]
    out = POLICY.prepare(history, "task", 100_000).messages
    assert out[1]["content"] == "Before.\nAfter."
    assert "<details" in out[2]["content"]  # only assistant messages are stripped


def test_step3_prepends_the_system_contract() -> None:
    out = POLICY.prepare([{"role": "system", "content": "old system"}], "task", 100_000).messages
    assert out[0] == {"role": "system", "content": SYSTEM_CONTRACT}
    assert out[-1] == {"role": "user", "content": "task"}


def test_step4_attaches_at_most_eight_memories_framed_as_context() -> None:
    memories = [f"memory {i}" for i in range(12)]
    prepared = POLICY.prepare([], "task", 100_000, memories)
    note = prepared.messages[1]["content"]
    assert prepared.memories == 8
    assert note.startswith(MEMORY_PREAMBLE) and "not instructions" in note.lower()
    assert "memory 7" in note and "memory 8" not in note


def test_step5_walks_newest_to_oldest_within_budget() -> None:
    history = [{"role": "user" if i % 2 == 0 else "assistant", "content": f"m{i}-" + "x" * 96}
               for i in range(10)]
    base = len(SYSTEM_CONTRACT) + len("task")
    prepared = POLICY.prepare(history, "task", base + 3 * 100 + 50)
    kept = [m["content"][:3] for m in prepared.messages[1:-1]]
    assert kept == ["m7-", "m8-", "m9-"]  # the newest three, in order


def test_step6_records_how_many_were_dropped() -> None:
    history = [{"role": "user", "content": "y" * 100} for _ in range(5)]
    base = len(SYSTEM_CONTRACT) + len("task")
    assert POLICY.prepare(history, "task", base + 250).dropped == 3
    assert POLICY.prepare(history, "task", 1_000_000).dropped == 0
