"""Context policy recent-visible-v3 inside a run: every request fits, whatever tries to break the budget.

The loop runs in-process with a scripted model and real tools; the model records
the size of every request as the window counts it (messages and tool schemas).
"""

from __future__ import annotations

import asyncio
import json
import re
from pathlib import Path
from typing import Any

import pytest

from k1412_ls.catalog import default_registry
from k1412_ls.config import ModelSpec, build_config
from k1412_ls.core.digest import RUN_DIGEST_HEADER
from k1412_ls.core.events import read_events
from k1412_ls.core.model_port import ContextOverflow, ModelReply
from k1412_ls.core.run_request import RunRequest
from k1412_ls.core.runtime import Runtime
from k1412_ls.core.window import (
    HIGH_WATER,
    RESULT_SHARE,
    ContextBudget,
    ContextTooSmall,
    ContextWindow,
    cut_result,
    request_chars,
    result_stub,
    schemas_chars,
)
from tests.support.long_run import extends
from tests.support.scripted_model import ScriptedChatModel


class MeasuredModel(ScriptedChatModel):
    """Records each request's size as the window counts it; refuses above ``window`` like a provider would."""

    def __init__(self, script: list[dict[str, Any]], window: int | None = None,
                 stated: dict[str, int] | None = None, refuse_first: int = 0) -> None:
        super().__init__(script)
        self.sizes: list[int] = []
        self.bodies: list[list[dict[str, Any]]] = []
        self.refusals = 0
        self.window = window
        self.stated = stated or {}
        self.output_caps: list[int] = []
        self.refuse_first = refuse_first
        self.refused_sizes: list[int] = []

    async def complete(self, messages: list[dict[str, Any]], tools: list[dict[str, Any]],
                       spec: ModelSpec) -> ModelReply:
        size = request_chars(messages, schemas_chars(tools))
        self.output_caps.append(spec.max_output_tokens)
        if (self.window is not None and size > self.window) or self.refusals < self.refuse_first:
            self.refusals += 1
            self.refused_sizes.append(size)
            raise ContextOverflow("refused for length", **self.stated)
        self.sizes.append(size)
        self.bodies.append(json.loads(json.dumps(messages)))
        return await super().complete(messages, tools, spec)


def make_runtime(tmp_path: Path, model: ScriptedChatModel, budget: int, **model_fields: Any) -> Runtime:
    config = build_config({"models": {"luna": {"context_chars": budget, "max_iterations": 200, **model_fields}}})
    return Runtime(config, lambda _c, _s: model, tmp_path / "state", default_registry())


def run(runtime: Runtime, task: str, ws: Path) -> Any:
    return asyncio.run(runtime.run(RunRequest(task=task, workspace=ws)))


def call(name: str, **arguments: Any) -> dict[str, Any]:
    return {"tool_calls": [{"name": name, "arguments": arguments}]}


def assert_well_formed(messages: list[dict[str, Any]]) -> None:
    """Every tool result answers a call of the assistant message before it, and every call is answered."""
    open_calls: set[str] = set()
    for message in messages:
        if message["role"] == "assistant":
            assert not open_calls, f"calls left unanswered: {open_calls}"
            open_calls = {c["id"] for c in message.get("tool_calls") or []}
        elif message["role"] == "tool":
            assert message["tool_call_id"] in open_calls
            open_calls.discard(message["tool_call_id"])


# -- the budget holds for every request -------------------------------------------------------------

def test_one_result_bigger_than_the_whole_budget_is_cut_on_arrival(tmp_path: Path, ws: Path) -> None:
    (ws / "huge.txt").write_text("".join(f"line {i}: " + "x" * 70 + "\n" for i in range(5_000)))  # ~400 KB
    model = MeasuredModel([call("read_file", path="huge.txt"),
                           {"content": "The first line of huge.txt is line 0 followed by a run of x characters."}])
    result = run(make_runtime(tmp_path, model, 30_000), "What is on the first line of huge.txt?", ws)
    assert result.status == "completed", result.message
    assert max(model.sizes) <= 30_000
    tool = next(m for m in model.bodies[1] if m["role"] == "tool")
    assert len(tool["content"]) <= 30_000 * RESULT_SHARE
    data = json.loads(tool["content"])  # still the tool's JSON
    assert data["ok"] is True and data["content"].startswith("line 0: ")
    shown = re.search(r"read_file with start_line=(\d+) and end_line=(\d+) shows the lines cut", data["content"])
    assert shown, data["content"][-500:]
    first, last = int(shown.group(1)), int(shown.group(2))
    head, tail = data["content"].split("…[K1412 omitted")[0], data["content"].split("]…")[-1]
    assert head.rstrip("\n").endswith(f"line {first - 2}: " + "x" * 70)
    assert tail.lstrip("\n").startswith(f"line {last}: ")  # lines are 1-based, the file counts from 0


def test_many_tiny_results_fold_into_a_digest_and_never_pass_the_budget(tmp_path: Path, ws: Path) -> None:
    (ws / "a.txt").write_text("tiny\n")
    script = [call("write_file", path="notes.txt", content="kept\n")]
    script += [call("stat_path", path="a.txt") for _ in range(150)]
    script += [call("read_file", path="notes.txt"), {"content": "I created notes.txt and read it back."}]
    model = MeasuredModel(script)
    result = run(make_runtime(tmp_path, model, 14_000), "Create notes.txt containing kept", ws)
    assert result.status == "completed", result.message
    assert max(model.sizes) <= 14_000
    last = model.bodies[-1]
    assert_well_formed(last)
    task = next(m["content"] for m in last if m["role"] == "user")
    assert RUN_DIGEST_HEADER in task and "notes.txt (create" in task and "stat_path ×" in task
    events = read_events(Path(result.events_path))
    compactions = [e.payload for e in events if e.type == "context.compacted"]
    assert compactions and sum(c["steps_folded"] for c in compactions) > 100
    assert all(c["after_chars"] <= c["budget_chars"] for c in compactions)


def test_a_giant_task_is_cut_once_and_later_steps_still_fit(tmp_path: Path, ws: Path) -> None:
    task = "Explain what this log says and write summary.txt.\n" + "".join(
        f"2026-01-01 12:00:{i % 60:02d} worker-{i} finished job {i}\n" for i in range(6_000)) + "END OF LOG"
    script = [call("write_file", path="summary.txt", content="all jobs finished\n"),
              call("read_file", path="summary.txt"), {"content": "summary.txt says all jobs finished."}]
    model = MeasuredModel(script)
    result = run(make_runtime(tmp_path, model, 40_000), task, ws)
    assert result.status == "completed", result.message
    assert max(model.sizes) <= 40_000
    sent = next(m["content"] for m in model.bodies[0] if m["role"] == "user")
    assert sent.startswith("Explain what this log says") and sent.rstrip().endswith("END OF LOG")
    assert "characters of the task text here to fit the context window" in sent
    compactions = [e for e in read_events(Path(result.events_path)) if e.type == "context.compacted"]
    assert len(compactions) == 1 and compactions[0].payload["task_cut"]  # cut once, not at every step
    assert extends(model.bodies[0], model.bodies[1]) and extends(model.bodies[1], model.bodies[2])


def test_non_ascii_results_stay_valid_text_within_the_budget(tmp_path: Path, ws: Path) -> None:
    text = "".join(f"第{i}行：上下文窗口测试，包含中文和emoji 🚀 以及组合字符 é\n" for i in range(3_000))
    (ws / "中文.txt").write_text(text, encoding="utf-8")
    script = [call("read_file", path="中文.txt") for _ in range(6)]
    script.append({"content": "中文.txt 的第一行是：第0行：上下文窗口测试，包含中文和emoji 🚀 以及组合字符 é"})
    model = MeasuredModel(script)
    result = run(make_runtime(tmp_path, model, 20_000), "中文.txt 的第一行写了什么？", ws)
    assert result.status == "completed", result.message
    assert max(model.sizes) <= 20_000
    for body in model.bodies:
        for message in body:
            if message["role"] == "tool":
                if message["content"].startswith("{"):
                    json.loads(message["content"])
                assert "\\u" not in message["content"]  # no escapes inflating the count
                message["content"].encode("utf-8")  # no split surrogate pairs


def test_sub_agent_results_count_and_reach_the_digest(tmp_path: Path, ws: Path) -> None:
    (ws / "app.py").write_text("".join(f"value_{i} = {i}\n" for i in range(2_000)))
    script = [call("spawn_agent", role="reviewer", task="Read app.py and report what it defines."),
              call("read_file", path="app.py"),  # the sub-agent
              {"content": "app.py defines value_0 to value_1999. " + "Details. " * 2_000},  # a long report
              *[call("read_file", path="app.py") for _ in range(8)],  # the parent goes on
              {"content": "The reviewer says app.py defines value_0 to value_1999."}]
    model = MeasuredModel(script)
    result = run(make_runtime(tmp_path, model, 24_000), "Delegate a review of app.py to a sub-agent", ws)
    assert result.status == "completed", result.message
    assert max(model.sizes) <= 24_000
    digest = next(m["content"] for m in model.bodies[-1] if m["role"] == "user")
    assert "Sub-agent results:" in digest and "agent-1 completed: app.py defines value_0" in digest


def test_big_arguments_of_old_calls_become_their_size_and_hash(tmp_path: Path, ws: Path) -> None:
    body = "".join(f"# line {i}\n" for i in range(1_500))
    script = [call("write_file", path="big.py", content=body)]
    script += [call("read_file", path="big.py", start_line=1, end_line=5) for _ in range(12)]
    script += [{"content": "I wrote big.py and read it back."}]
    model = MeasuredModel(script)
    result = run(make_runtime(tmp_path, model, 20_000), "Write big.py with 1500 comment lines", ws)
    assert result.status == "completed", result.message
    assert (ws / "big.py").read_text() == body  # the write itself was whole
    assert max(model.sizes) <= 20_000
    assert all(len(json.dumps(b)) < 30_000 for b in model.bodies)


# -- cache-friendly: between compactions each request extends the previous one ---------------------

def test_requests_extend_each_other_between_compactions(tmp_path: Path, ws: Path) -> None:
    for i in range(20):
        (ws / f"m{i}.py").write_text("".join(f"x_{i}_{n} = {n}\n" for n in range(150)))
    script = [call("read_file", path=f"m{i}.py") for i in range(20)] + [{"content": "m0.py sets x_0_0 = 0."}]
    model = MeasuredModel(script)
    result = run(make_runtime(tmp_path, model, 30_000), "What does m0.py set first?", ws)
    assert result.status == "completed", result.message
    events = read_events(Path(result.events_path))
    compacted_before = {e.payload["iteration"] for e in events if e.type == "model.requested"
                        and any(c.seq == e.seq - 1 for c in events if c.type == "context.compacted")}
    breaks = [i + 2 for i in range(len(model.bodies) - 1) if not extends(model.bodies[i], model.bodies[i + 1])]
    assert breaks and set(breaks) == compacted_before  # only a compaction rewrites the prefix
    assert len(breaks) / (len(model.bodies) - 1) <= 0.3
    assert all(size <= 30_000 * HIGH_WATER for size in model.sizes)


# -- overflow refusals --------------------------------------------------------------------------------

def test_a_refusal_with_a_stated_window_is_learned_for_the_rest_of_the_run(tmp_path: Path, ws: Path) -> None:
    for i in range(12):
        (ws / f"m{i}.py").write_text("".join(f"y_{i}_{n} = {n}\n" for n in range(400)))
    script = [call("read_file", path=f"m{i}.py") for i in range(12)] + [{"content": "m3.py sets y_3_0 = 0."}]
    model = MeasuredModel(script, window=26_000, stated={"window_tokens": 6_500, "prompt_tokens": 7_000})
    result = run(make_runtime(tmp_path, model, 200_000, max_output_tokens=1_000), "What does m3.py set?", ws)
    assert result.status == "completed", result.message
    events = read_events(Path(result.events_path))
    overflows = [e.payload for e in events if e.type == "context.overflowed"]
    assert len(overflows) == 1 and model.refusals == 1  # learned once, never refused again
    learned = overflows[0]
    assert learned["learned_window"] and learned["window_tokens"] == 6_500
    assert learned["budget_chars"] < 26_000 and learned["budget_chars_before"] == 200_000
    later = [e.payload["budget_chars"] for e in events if e.type == "model.requested"][-1]
    assert later == learned["budget_chars"]


def test_a_refusal_without_numbers_shrinks_until_it_fits(tmp_path: Path, ws: Path) -> None:
    for i in range(10):
        (ws / f"m{i}.py").write_text("".join(f"z_{i}_{n} = {n}\n" for n in range(500)))
    script = [call("read_file", path=f"m{i}.py") for i in range(10)] + [{"content": "m1.py sets z_1_0 = 0."}]
    model = MeasuredModel(script, window=25_000)
    result = run(make_runtime(tmp_path, model, 200_000), "What does m1.py set?", ws)
    assert result.status == "completed", result.message
    overflows = [e.payload for e in read_events(Path(result.events_path)) if e.type == "context.overflowed"]
    assert 1 <= len(overflows) <= 3 and not overflows[0]["learned_window"]
    assert all(o["budget_chars"] < o["budget_chars_before"] for o in overflows)


def test_refusals_are_retried_a_bounded_number_of_times_then_one_sentence(tmp_path: Path, ws: Path) -> None:
    # The provider refuses everything above 12k characters: the minimum context (rules, schemas, task)
    # does not fit, so the run fails with one clear sentence after at most 3 smaller retries.
    model = MeasuredModel([{"content": "never sent"}], window=5_000)
    result = run(make_runtime(tmp_path, model, 200_000), "Summarise README.md", ws)
    assert result.status == "failed"
    assert model.refusals <= 4
    assert result.message.count(". ") == 0 and result.message.endswith(".")
    assert "context" in result.message and ("context_chars" in result.message or "context size" in result.message)


def test_the_vllm_output_cap_refusal_lowers_the_output_cap(tmp_path: Path, ws: Path) -> None:
    # vLLM: "'max_tokens' or 'max_completion_tokens' is too large: 8000. This model's maximum context length
    # is 4096 tokens and your request has 2778 input tokens": shrinking the messages alone cannot help.
    budget = ContextBudget(200_000)
    learned = budget.learn(ContextOverflow("x", window_tokens=4_096, prompt_tokens=2_778, completion_tokens=8_000),
                           sent_chars=9_000, output_tokens=8_000)
    assert budget.max_output_tokens == 1_024 and learned["max_output_tokens"] == 1_024
    assert budget.chars == learned["budget_chars"] < 9_000
    model = MeasuredModel([{"content": "Hello."}], refuse_first=1,
                          stated={"window_tokens": 4_096, "prompt_tokens": 2_000, "completion_tokens": 8_000})
    result = run(make_runtime(tmp_path, model, 200_000, max_output_tokens=8_000), "Say hello", ws)
    assert model.refusals == 1 and model.output_caps == [8_000, 1_024], result.message


def test_the_minimum_not_fitting_the_configured_budget_is_one_sentence(tmp_path: Path, ws: Path) -> None:
    model = MeasuredModel([{"content": "never sent"}])
    result = run(make_runtime(tmp_path, model, 3_000), "Summarise README.md", ws)
    assert result.status == "failed" and not model.sizes
    assert "cannot hold even the minimum context" in result.message and "\n" not in result.message


# -- the pieces -----------------------------------------------------------------------------------------

def test_a_stub_keeps_call_arguments_status_path_head_and_tail() -> None:
    content = json.dumps({"ok": True, "path": "src/a.py", "content": "HEAD-" + "m" * 5_000 + "-TAIL"})
    stub = result_stub(content, "read_file", '{"path": "src/a.py"}')
    assert stub.startswith("[K1412 elided this old result")
    assert 'read_file {"path": "src/a.py"}' in stub and "ok, path src/a.py" in stub
    assert "head: HEAD-" in stub and "-TAIL" in stub and "Re-read with read_file" in stub
    failed = result_stub(json.dumps({"ok": False, "exit_code": 2, "output": "E" * 900}), "run_command",
                         '{"command": "pytest"}')
    assert "failed, exit 2" in failed and "Re-read with the same call" in failed
    assert len(stub) < 800 and len(failed) < 800


def test_cut_results_stay_json_and_respect_their_limit() -> None:
    for content in ("x" * 50_000, "第一行\n" * 9_000, json.dumps({"ok": True, "output": "é\n" * 30_000})):
        cut = cut_result(content, 4_000, "run_command")
        assert len(cut) <= 4_000
        if content.startswith("{"):
            assert json.loads(cut)["ok"] is True


def test_compaction_is_deterministic() -> None:
    def build() -> list[dict[str, Any]]:
        messages = [{"role": "system", "content": "rules"}, {"role": "user", "content": "task"}]
        window = ContextWindow(messages, 2, ContextBudget(6_000), lambda folded, steps, limit: f"{sorted(folded)}")
        for i in range(30):
            window.append({"role": "assistant", "content": None, "tool_calls": [
                {"id": f"c{i}", "type": "function", "function": {"name": "read_file", "arguments": "{}"}}]})
            window.append({"role": "tool", "tool_call_id": f"c{i}", "content": json.dumps({"ok": True, "content": "v" * 500})})
            window.for_request()
        return window.messages

    first, second = build(), build()
    assert first == second
    assert_well_formed(first)
    assert request_chars(first) <= 6_000


def test_too_small_raises_one_sentence() -> None:
    window = ContextWindow([{"role": "system", "content": "r" * 5_000}, {"role": "user", "content": "t"}], 2,
                           ContextBudget(4_000), lambda folded, steps, limit: "")
    with pytest.raises(ContextTooSmall, match=r"^The context window \(4000 characters\) cannot hold"):
        window.for_request()


def test_progress_lines_name_what_compaction_and_refusals_did() -> None:
    from k1412_ls.core.events import Event
    from k1412_ls.core.render import describe_event

    def event(kind: str, payload: dict[str, Any]) -> Event:
        return Event(run_id="r", seq=1, ts="t", type=kind, user="u", conversation=None, meta={}, payload=payload)

    compacted = describe_event(event("context.compacted", {"before_chars": 37_000, "after_chars": 19_000,
                                                           "budget_chars": 40_000, "results_elided": 6,
                                                           "steps_folded": 3}))
    assert compacted == "context compacted: 37000 → 19000 of 40000 chars, 6 results elided, 3 steps folded"
    refused = describe_event(event("context.overflowed", {"sent_chars": 31_000, "window_tokens": 7_500,
                                                          "budget_chars": 23_000}))
    assert refused == "provider refused 31000 chars as too long; window 7500 tokens; budget now 23000 chars"


def test_the_last_retry_sends_the_minimum_so_a_window_just_above_it_still_works(tmp_path: Path, ws: Path) -> None:
    for i in range(6):
        (ws / f"m{i}.py").write_text("".join(f"w_{i}_{n} = {n}\n" for n in range(3_000)))
    task = "What does m2.py set? " + "Context for the question. " * 800  # a long task: the minimum cuts it
    script = [call("read_file", path=f"m{i}.py") for i in range(6)] + [{"content": "m2.py sets w_2_0 = 0."}]
    # A provider that refuses everything: one request and three smaller retries, the last one the minimum.
    stubborn = MeasuredModel(list(script), window=1)
    failed = run(make_runtime(tmp_path / "stubborn", stubborn, 200_000), task, ws)
    assert failed.status == "failed" and 2 <= stubborn.refusals <= 4  # bounded
    assert failed.message.startswith("The provider refused even the minimum context (")
    assert stubborn.refused_sizes[-1] < min(stubborn.refused_sizes[:-1])
    minimum = stubborn.refused_sizes[-1]
    # No numbers in the refusals and a window a little above the minimum (room for the digest of the
    # steps to come): the run recovers and goes on within it.
    window = minimum + 6_000
    model = MeasuredModel(script, window=window)
    result = run(make_runtime(tmp_path, model, 200_000), task, ws)
    assert result.status == "completed", result.message
    overflows = [e.payload for e in read_events(Path(result.events_path)) if e.type == "context.overflowed"]
    assert 1 <= len(overflows) <= 3 and max(model.sizes) <= window
