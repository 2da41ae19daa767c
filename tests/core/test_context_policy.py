"""ContextPolicy recent-visible-v3 (start of a run): one test per step of the policy."""

from __future__ import annotations

from k1412_ls.core.context_policy import HISTORY_SHARE, MEMORY_PREAMBLE, SYSTEM_CONTRACT, ContextPolicy
from k1412_ls.core.digest import CONVERSATION_DIGEST_HEADER

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


def test_step5_walks_newest_to_oldest_within_a_quarter_of_the_budget() -> None:
    history = [{"role": "user" if i % 2 == 0 else "assistant", "content": f"m{i}-" + "x" * 96}
               for i in range(10)]
    budget = int((4 * 100 + 50) / HISTORY_SHARE)  # room for four history messages, not five
    prepared = POLICY.prepare(history, "task", budget)
    kept = [m["content"][:3] for m in prepared.messages if m["role"] != "system"][:-1]
    assert kept == ["m6-", "m7-", "m8-", "m9-"]  # the newest four, in order, starting with a question
    assert prepared.history_kept == 4


def test_step5_never_starts_the_kept_history_with_an_answer_cut_from_its_question() -> None:
    history = [{"role": "user" if i % 2 == 0 else "assistant", "content": f"m{i}-" + "x" * 96}
               for i in range(10)]
    prepared = POLICY.prepare(history, "task", int((3 * 100 + 50) / HISTORY_SHARE))
    kept = [m["content"][:3] for m in prepared.messages if m["role"] != "system"][:-1]
    assert kept == ["m8-", "m9-"]  # m7 (an answer) would have been kept without m6, its question


def test_step6_records_how_many_were_dropped() -> None:
    history = [{"role": "user", "content": "y" * 1000} for _ in range(5)]
    assert POLICY.prepare(history, "task", int(2500 / HISTORY_SHARE)).dropped == 3
    assert POLICY.prepare(history, "task", 1_000_000).dropped == 0


def test_step6_dropped_turns_leave_a_deterministic_digest_with_verdicts() -> None:
    history = []
    for i in range(6):
        verdict = {"status": "completed" if i % 2 else "unverified", "files_changed": [f"f{i}.py"]}
        history.append({"role": "user", "content": f"question {i} " + "q" * 300, **verdict})
        history.append({"role": "assistant", "content": f"answer {i} " + "a" * 300, **verdict})
    first = POLICY.prepare(history, "task", 6_000)
    again = POLICY.prepare(history, "task", 6_000)
    assert first.messages == again.messages  # deterministic
    assert first.digest_turns >= 1 and first.dropped >= 2
    digest = next(m["content"] for m in first.messages if m["content"].startswith(CONVERSATION_DIGEST_HEADER))
    # the newest dropped turn is named with its verdict; older ones are counted when the digest is full
    newest = first.dropped // 2 - 1
    assert f"asked: question {newest}" in digest and f"→ completed; files changed: f{newest}.py" in digest
    assert f"answer: answer {newest}" in digest and "earlier entries not shown" in digest
    roomy = POLICY.prepare(history, "task", 12_000)
    digest = next(m["content"] for m in roomy.messages if m["content"].startswith(CONVERSATION_DIGEST_HEADER))
    assert "asked: question 0" in digest and "→ unverified; files changed: f0.py" in digest
    # the digest is context, not the conversation: no metadata is ever sent
    assert all(set(m) == {"role", "content"} for m in first.messages)
    assert sum(len(m["content"]) for m in first.messages) <= 6_000
    # nothing dropped, no digest
    assert not any(m["content"].startswith(CONVERSATION_DIGEST_HEADER)
                   for m in POLICY.prepare(history, "task", 1_000_000).messages)
