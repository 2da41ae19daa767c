"""Cost you can trust, through the real ``k1412 run``: usage × pricing per call, per sub-agent and per run,
cached prompt tokens at the cached price, and budgets that end a run ``unverified`` naming themselves."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from k1412_ls.core.events import Event
from k1412_ls.core.render import describe_event
from tests.support.cli import config_for, k1412
from tests.support.scripted_server import ScriptedServer

pytestmark = pytest.mark.e2e

PRICES = {"input": 3.0, "cached_input": 0.3, "output": 15.0}
PRICING = "pricing = { input = 3.0, cached_input = 0.3, output = 15.0, currency = \"USD\" }\n"
TASK = "Create hello.py that prints hello world and run it"
USAGES = [
    {"prompt_tokens": 1200, "completion_tokens": 80, "reasoning_tokens": 30, "cached": 0},
    {"prompt_tokens": 1500, "completion_tokens": 40, "reasoning_tokens": 0, "cached": 1024},
    {"prompt_tokens": 1700, "completion_tokens": 60, "reasoning_tokens": 10, "cached": 1408},
]


def expected_amount(usage: dict[str, int]) -> float:
    """The price list applied by hand: uncached prompt, cached prompt and completion tokens."""
    cached = usage["cached"]
    return ((usage["prompt_tokens"] - cached) * PRICES["input"] + cached * PRICES["cached_input"]
            + usage["completion_tokens"] * PRICES["output"]) / 1_000_000


def hello_script(cache_field: str) -> list[dict[str, Any]]:
    steps: list[dict[str, Any]] = [
        {"tool_calls": [{"name": "write_file", "arguments": {"path": "hello.py", "content": "print('hello world')\n"}}]},
        {"tool_calls": [{"name": "run_command", "arguments": {"command": "python3 hello.py"}}]},
        {"content": "I created hello.py and ran it; it printed hello world."},
    ]
    for step, usage in zip(steps, USAGES, strict=True):
        step["usage"] = {k: v for k, v in usage.items() if k != "cached"} | {cache_field: usage["cached"]}
    return steps


@pytest.mark.parametrize("cache_field", ["cached_tokens", "prompt_cache_hit_tokens"], ids=["openai", "deepseek"])
def test_run_cost_is_usage_times_pricing_with_cached_tokens_at_the_cached_price(
        tmp_path: Path, ws: Path, cache_field: str) -> None:
    with ScriptedServer(hello_script(cache_field)) as server:
        run = k1412("run", TASK, "--config", str(config_for(tmp_path, server.base_url, PRICING)), "--json", cwd=ws)
    assert run.code == 0, run.stderr
    result = run.result
    total = sum(expected_amount(u) for u in USAGES)
    assert result["cost"]["priced"] is True and result["cost"]["currency"] == "USD"
    assert result["cost"]["amount"] == pytest.approx(total, rel=1e-9)
    # Pricing cached tokens as ordinary input would have cost this much more: the test can tell.
    assert total + sum(u["cached"] for u in USAGES) * (3.0 - 0.3) / 1e6 > total * 1.5
    assert result["usage"]["cached_tokens"] == sum(u["cached"] for u in USAGES)
    assert result["usage"]["reasoning_tokens"] == 40
    events = run.events()
    calls = [e for e in events if e["type"] == "model.responded"]
    assert [c["payload"]["cost"]["amount"] for c in calls] == pytest.approx([expected_amount(u) for u in USAGES])
    assert calls[-1]["payload"]["run"]["cost"]["amount"] == pytest.approx(total)
    ended = events[-1]
    assert ended["type"] == "run.completed" and ended["payload"]["cost"] == result["cost"]
    # Progress shows tokens and cost as the run goes.
    line = describe_event(Event.model_validate(calls[0]))
    assert line is not None and "1,280 tokens" in line and "$0.0048" in line


def test_off_peak_rates_apply_outside_the_peak_windows(tmp_path: Path, ws: Path) -> None:
    # No peak day at all: every call is billed at the off-peak rates, whatever the hour of the test.
    hourly = ("pricing = { input = 3.0, cached_input = 0.3, output = 15.0, peak_hours_utc = [\"00:00-24:00\"], "
              "peak_weekdays = [], off_peak = { input = 1.5, cached_input = 0.15, output = 7.5 } }\n")
    with ScriptedServer(hello_script("prompt_cache_hit_tokens")) as server:
        run = k1412("run", TASK, "--config", str(config_for(tmp_path, server.base_url, hourly)), "--json", cwd=ws)
    assert run.code == 0, run.stderr
    assert run.result["cost"]["amount"] == pytest.approx(sum(expected_amount(u) for u in USAGES) / 2)


def test_sub_agent_cost_is_reported_and_counted_in_the_run(tmp_path: Path, ws: Path) -> None:
    (ws / "notes.txt").write_text("the launch is on tuesday\n")
    usage = {"prompt_tokens": 1000, "completion_tokens": 100}
    script = [
        {"tool_calls": [{"name": "spawn_agent", "arguments": {"role": "reader", "task": "Read notes.txt and report it."}}],
         "usage": usage},
        {"tool_calls": [{"name": "read_file", "arguments": {"path": "notes.txt"}}], "usage": usage},
        {"content": "notes.txt says the launch is on tuesday.", "usage": usage},
        {"tool_calls": [{"name": "read_file", "arguments": {"path": "notes.txt"}}], "usage": usage},
        {"content": "notes.txt says the launch is on tuesday.", "usage": usage},
    ]
    with ScriptedServer(script) as server:
        run = k1412("run", "Use a sub-agent to tell me what notes.txt says", "--config",
                    str(config_for(tmp_path, server.base_url, PRICING)), "--json", cwd=ws)
    assert run.code == 0, run.stderr
    per_call = (1000 * 3.0 + 100 * 15.0) / 1e6
    spawned = [e for e in run.events() if e["type"] == "agent.completed"]
    assert len(spawned) == 1
    assert spawned[0]["payload"]["cost"]["amount"] == pytest.approx(2 * per_call)
    assert spawned[0]["payload"]["usage"]["prompt_tokens"] == 2000
    assert run.result["cost"]["amount"] == pytest.approx(5 * per_call)


def test_max_cost_stops_the_run_unverified_naming_the_budget_before_running_the_last_calls(
        tmp_path: Path, ws: Path) -> None:
    big = {"prompt_tokens": 100_000, "completion_tokens": 1000}  # $0.315 a call at these prices
    script = [
        {"tool_calls": [{"name": "list_files", "arguments": {"path": "."}}], "usage": big},
        {"tool_calls": [{"name": "stat_path", "arguments": {"path": "."}}], "usage": big},
        {"tool_calls": [{"name": "write_file", "arguments": {"path": "report.txt", "content": "half\n"}}],
         "usage": big},
        {"content": "Done.", "usage": big, "repeat": True},
    ]
    with ScriptedServer(script) as server:
        run = k1412("run", "Write report.txt saying hello", "--config",
                    str(config_for(tmp_path, server.base_url, PRICING)), "--max-cost", "0.9", "--json", cwd=ws)
        requests = len(server.chat_requests)
    assert run.code == 3, run.stderr
    result = run.result
    assert result["status"] == "unverified"
    assert "cost budget" in result["message"] and "max_cost $0.9" in result["message"]
    assert requests == 3
    assert not (ws / "report.txt").exists(), "the call that crossed the budget must not run"
    events = run.events()
    stop = next(e for e in events if e["type"] == "budget.exhausted")
    assert stop["payload"]["budget"] == "max_cost" and stop["payload"]["dropped_tool_calls"] == ["write_file"]
    assert stop["payload"]["spent"] == pytest.approx(3 * 0.315)
    assert [e["payload"]["tool"] for e in events if e["type"] == "tool.completed"] == ["list_files", "stat_path"]
    assert all(e["meta"]["budget"] == "max_cost=0.9" for e in events)
    assert result["cost"]["amount"] == pytest.approx(3 * 0.315)


def test_token_budget_from_the_configuration_stops_the_run(tmp_path: Path, ws: Path) -> None:
    step = {"tool_calls": [{"name": "list_files", "arguments": {"path": "."}}],
            "usage": {"prompt_tokens": 4000, "completion_tokens": 500}, "repeat": True}
    with ScriptedServer([step]) as server:
        config = config_for(tmp_path, server.base_url)
        config.write_text(config.read_text() + "[budget]\nmax_tokens = 10000\n")
        run = k1412("run", "Write a.txt saying hi", "--config", str(config), "--json", cwd=ws)
        requests = len(server.chat_requests)
    assert run.code == 3 and run.result["status"] == "unverified"
    assert "token budget (max_tokens 10000)" in run.result["message"]
    assert requests == 3  # 4,500 tokens a call: the third reaches 10,000
    assert run.result["cost"] == {"amount": 0.0, "currency": "USD", "priced": False}


def test_a_cost_budget_for_an_unpriced_model_is_refused_in_one_sentence(tmp_path: Path, ws: Path) -> None:
    run = k1412("run", "hi", "--config", str(config_for(tmp_path, "http://127.0.0.1:9/v1")), "--max-cost", "1",
                cwd=ws)
    assert run.code == 2
    assert run.stderr.count("\n") == 1 and "has no pricing" in run.stderr and "Traceback" not in run.stderr
    configured = config_for(tmp_path, "http://127.0.0.1:9/v1")
    configured.write_text(configured.read_text() + "[budget]\nmax_cost = 2.5\n")
    listed = k1412("run", "hi", "--config", str(configured), cwd=ws)
    assert listed.code == 2 and "has no pricing" in listed.stderr and listed.stderr.count("\n") == 1
    bad = k1412("run", "hi", "--max-cost", "-3", cwd=ws)
    assert bad.code == 2 and "must be above zero" in bad.stderr


def test_models_list_built_in_prices_and_a_repository_cannot_change_them(tmp_path: Path, ws: Path) -> None:
    run = k1412("models", "--json", cwd=ws)
    assert run.code == 0
    models = {m["id"]: m for m in json.loads(run.stdout)}
    assert models["deepseek-v4-pro"]["pricing"] == {
        "input": 1.32, "cached_input": 0.044, "output": 3.96, "currency": "USD",
        "off_peak": {"input": 0.66, "cached_input": 0.022, "output": 1.98},
        "peak_hours_utc": ["01:00-04:00", "06:00-10:00"], "peak_weekdays": [0, 1, 2, 3, 4]}
    assert all(models[m]["pricing"]["input"] == 0 and models[m]["pricing"]["output"] == 0
               for m in ("luna", "terra", "sol"))
    (ws / ".k1412").mkdir()
    (ws / ".k1412" / "config.toml").write_text(
        '[models.deepseek-v4-pro]\npricing = { input = 0, cached_input = 0, output = 0 }\n')
    refused = k1412("models", "--json", cwd=ws)
    assert refused.code == 2 and "may not set 'models.deepseek-v4-pro.pricing'" in refused.stderr
    (ws / ".k1412" / "config.toml").write_text('[models.luna]\nprovider = "openai"\nprovider_model = "gpt-4.1"\n')
    moved = {m["id"]: m for m in json.loads(k1412("models", "--json", cwd=ws).stdout)}
    assert moved["luna"]["pricing"] is None, "a built-in id pointed at a paid model keeps no free price"
