"""Intent classification and tool selection: the shared vocabulary seen from the router."""

from __future__ import annotations

import pytest
from pydantic import BaseModel, ConfigDict

from k1412_ls.catalog import default_registry
from k1412_ls.core.evidence import derive_requirements
from k1412_ls.core.intent import IntentDecision, classify_intent, select_tool_names
from k1412_ls.text.vocabulary import ALL_TAGS, RULES, extract_targets
from k1412_ls.tools.registry import Tool, ToolContext, ToolResult

# (request, tags it must carry, tags it must not carry)
REQUESTS: list[tuple[str, str, str]] = [
    ("Create hello.py that prints hello", "artifact source", "execution report memory greeting"),
    ("Write a Python script that prints the first 10 primes", "artifact source", "report"),
    ("Run the tests", "execution", "artifact source report"),
    ("Make sure the tests pass", "execution", "report"),
    ("Fix the failing tests in tests/test_api.py", "artifact execution", "report"),
    ("Add type hints to utils.py", "artifact", "execution report"),
    ("Run the tests and write a report to results.md", "artifact execution report multistep", "memory"),
    ("Benchmark bubble sort vs quicksort and write a report", "comparison measurement report execution", "memory"),
    ("Which is faster, json or orjson? Measure it.", "comparison measurement question", "artifact"),
    ("Compare config.yaml and config.prod.yaml", "comparison", "measurement execution"),
    ("Start the dev server in the background and tail the logs", "process execution", "memory"),
    ("Commit my changes with a good message", "git execution", "memory"),
    ("Show me the git diff", "git", "artifact execution"),
    ("What changed on this branch?", "git question", "artifact"),
    ("Remember that I prefer tabs over spaces", "memory", "artifact execution git"),
    ("Do you recall my preferred test runner?", "memory question", "artifact"),
    ("Delegate a security review of auth.py to a sub-agent", "delegation analysis", "memory"),
    ("What does parse_args() do?", "question workspace", "artifact execution"),
    ("Explain the error handling in server.py", "analysis workspace", "artifact execution"),
    ("What is 2+2?", "question", "workspace artifact execution"),
    ("Hello!", "greeting", "question artifact execution"),
    ("Thanks a lot", "greeting", "artifact"),
    ("Hi, can you create notes.md with my todo list?", "artifact question", "greeting"),
    ("First read main.py, then refactor the parser, then run the tests", "multistep artifact execution", "memory"),
    ("Explain how the Node.js event loop works", "analysis", "artifact execution"),
    ("Delete old.txt", "artifact", "execution"),
    # Chinese and mixed
    ("创建一个名为 data.csv 的文件", "artifact", "execution report greeting"),
    ("运行测试", "execution", "artifact report"),
    ("写一个脚本，统计 words.txt 中的单词数", "artifact source", "report"),
    ("生成报告", "report artifact", "source"),  # generating a report makes a file
    ("比较两个排序算法的性能", "comparison measurement execution", "memory"),
    ("做一个基准测试，比较 list 和 deque 的速度", "measurement comparison", "memory"),
    ("这个函数是做什么的？", "question workspace", "artifact execution greeting"),
    ("你好", "greeting", "question artifact execution"),
    ("谢谢！", "greeting", "artifact"),
    ("修复 utils.py 中的 bug 并运行测试", "artifact execution", "report"),
    ("在后台启动开发服务器", "process execution", "memory"),
    ("提交代码到新分支", "git execution", "memory"),
    ("记住我喜欢用 pytest", "memory", "artifact"),
    ("把这个任务委派给一个子代理", "delegation", "memory"),
    ("分析一下这个项目的目录结构", "analysis workspace", "artifact execution"),
    ("首先读取 main.py，然后重构解析器，最后运行测试", "multistep artifact execution", "memory"),
    ("请帮我写一个 Python 函数计算斐波那契数列", "artifact source", "report"),
    ("把结果保存到 results.json", "artifact", "memory"),
    ("今天天气怎么样？", "question", "workspace artifact execution"),
    ("用 pytest 跑一下 tests/test_api.py", "execution", "artifact report"),
]


@pytest.mark.parametrize(("request_text", "present", "absent"), REQUESTS, ids=[r[0][:40] for r in REQUESTS])
def test_classify_intent(request_text: str, present: str, absent: str) -> None:
    decision = classify_intent(request_text)
    assert set(present.split()) <= decision.tags, (decision.tags, decision.rules)
    assert not set(absent.split()) & decision.tags, (decision.tags, decision.rules)
    # Every tag is explained by a named rule that gave it.
    for tag in decision.tags - {"multistep"}:
        assert any(tag in rule.tags for rule in RULES if rule.name in decision.rules), tag


def test_request_table_is_large_and_bilingual() -> None:
    chinese = [r for r, _, _ in REQUESTS if any("\u4e00" <= ch <= "\u9fff" for ch in r)]
    assert len(REQUESTS) >= 40 and len(chinese) >= 15


def test_rules_are_named_uniquely_and_use_known_tags() -> None:
    names = [rule.name for rule in RULES]
    assert len(names) == len(set(names))
    assert all(rule.tags <= ALL_TAGS for rule in RULES)


@pytest.mark.parametrize(("request_text", "targets"), [
    ("Create hello.py that prints hello", ("hello.py",)),
    ("创建一个名为 data.csv 的文件", ("data.csv",)),
    ("创建文件hello.py，然后运行", ("hello.py",)),
    ("Fix ./src/app/main.ts and update README.md", ("src/app/main.ts", "README.md")),
    ("Write a Makefile for this project", ("Makefile",)),
    ("Explain how Node.js and Vue.js differ", ()),
    ("See https://example.org/index.html for the spec", ()),
    ("Use Python 3.11, e.g. version 2.0", ()),
    ("Compare a.py and a.py again", ("a.py",)),
])
def test_extract_targets(request_text: str, targets: tuple[str, ...]) -> None:
    assert extract_targets(request_text) == targets


class _NoArgs(BaseModel):
    model_config = ConfigDict(extra="forbid")


def _handler(args: _NoArgs, ctx: ToolContext) -> ToolResult:
    return ToolResult.success()


def _tool(name: str, *tags: str) -> Tool:
    return Tool(name, f"{name} tool", _NoArgs, _handler, tags=frozenset(tags))


CATALOGUE = [
    _tool("read_file", "core"), _tool("write_file", "core"), _tool("run_command", "core", "execution"),
    _tool("git_status", "git"), _tool("git_diff", "git"), _tool("process_start", "process"),
    _tool("process_poll", "process"), _tool("update_plan", "plan"), _tool("remember", "memory"),
    _tool("recall", "memory"), _tool("forget", "memory"), _tool("spawn_agent", "delegation"),
    _tool("lint_code", "execution"), _tool("mystery_tool"),
]
CORE = {"read_file", "write_file", "run_command"}


@pytest.mark.parametrize(("request_text", "extra"), [
    ("你好", {"mystery_tool"}),
    ("What is 2+2?", {"mystery_tool"}),
    ("Remember that I prefer tabs", {"remember", "recall", "forget", "mystery_tool"}),
    ("Delegate a review of auth.py to a sub-agent", {"spawn_agent", "mystery_tool"}),
    ("Start the dev server in the background", {"process_start", "process_poll", "lint_code", "mystery_tool"}),
    ("Show me the git diff", {"git_status", "git_diff", "mystery_tool"}),
    ("Create hello.py that prints hello", {"git_status", "git_diff", "mystery_tool"}),
    ("Run the tests", {"lint_code", "mystery_tool"}),
    ("First read main.py, then refactor the parser, then run the tests",
     {"git_status", "git_diff", "update_plan", "lint_code", "mystery_tool"}),
    ("首先读取 main.py，然后重构解析器，最后运行测试",
     {"git_status", "git_diff", "update_plan", "lint_code", "mystery_tool"}),
])
def test_select_tool_names(request_text: str, extra: set[str]) -> None:
    decision = classify_intent(request_text)
    selected = select_tool_names(CATALOGUE, decision.tags)
    assert set(selected) == CORE | extra
    assert selected == [t.name for t in CATALOGUE if t.name in selected]  # catalogue order kept
    assert select_tool_names(CATALOGUE, decision) == selected


def test_real_catalogue_keeps_core_and_hides_unrelated_families() -> None:
    tools = list(default_registry())
    core = {t.name for t in tools if "core" in t.tags}
    assert {"read_file", "write_file", "patch_file", "apply_patch", "list_files", "search_files", "stat_path",
            "run_command"} <= core
    greeting = set(select_tool_names(tools, classify_intent("你好").tags))
    assert greeting == core
    memory = set(select_tool_names(tools, classify_intent("Remember that I use uv").tags))
    assert memory == core | {"remember", "recall", "forget"}


def test_evidence_and_intent_share_one_decision() -> None:
    request = "Benchmark bubble sort vs quicksort and write a report"
    decision = classify_intent(request)
    requirements = derive_requirements(request)
    assert set(decision.rules) <= set(requirements.rules)
    assert requirements.kinds == ("artifact", "execution", "report", "benchmark")
    assert isinstance(decision, IntentDecision)
