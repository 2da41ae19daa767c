"""Intent classification and tool selection: the shared vocabulary seen from the router."""

from __future__ import annotations

import pytest
from pydantic import BaseModel, ConfigDict

from k1412_ls.catalog import default_registry
from k1412_ls.core.evidence import derive_requirements
from k1412_ls.core.evidence.requirements import without_prohibitions
from k1412_ls.core.intent import IntentDecision, classify_intent, select_tool_names
from k1412_ls.text.vocabulary import ALL_TAGS, RULES, extract_targets
from k1412_ls.tools.registry import Tool, ToolContext, ToolResult

# (request, every tag it gets): the whole set, so a rule that starts firing where it should not fails here.
REQUESTS: list[tuple[str, str]] = [
    ("Create hello.py that prints hello", "artifact change source"),
    ("Write a Python script that prints the first 10 primes", "artifact change source workspace"),
    ("Run the tests", "execution tests workspace"),
    ("Make sure the tests pass", "execution tests workspace"),
    ("Fix the failing tests in tests/test_api.py", "artifact change execution tests workspace"),
    ("Add type hints to utils.py", "artifact change"),
    ("Run the tests and write a report to results.md", "artifact change execution multistep report tests workspace"),
    ("Benchmark bubble sort vs quicksort and write a report",
     "artifact change comparison execution measurement multistep report"),
    ("Which is faster, json or orjson? Measure it.", "comparison execution measurement question"),
    ("Compare config.yaml and config.prod.yaml", "comparison"),
    ("Start the dev server in the background and tail the logs", "execution process workspace"),
    ("Commit my changes with a good message", "commit execution git workspace"),
    ("Show me the git diff", "analysis git"),
    ("What changed on this branch?", "git question"),
    ("Remember that I prefer tabs over spaces", "memory"),
    ("Delegate a security review of auth.py to a sub-agent", "analysis delegation"),
    ("What does parse_args() do?", "question workspace"),
    ("Explain the error handling in server.py", "analysis workspace"),
    ("What is 2+2?", "question"),
    ("Hello!", "greeting"),
    ("Thanks a lot", "greeting"),
    ("Hi, can you create notes.md with my todo list?", "analysis artifact change question"),
    ("First read main.py, then refactor the parser, then run the tests",
     "analysis artifact change execution multistep tests workspace"),
    ("Explain how the Node.js event loop works", "analysis"),
    ("Delete old.txt", "artifact change deletion"),
    ("Tell me a joke", ""),
    # Chinese and mixed
    ("创建一个名为 data.csv 的文件", "artifact change workspace"),
    ("运行测试", "execution tests"),
    ("写一个脚本，统计 words.txt 中的单词数", "artifact source workspace"),
    ("生成报告", "artifact change report"),  # generating a report makes a file
    ("比较两个排序算法的性能", "comparison execution measurement"),
    ("做一个基准测试，比较 list 和 deque 的速度", "analysis comparison execution measurement tests"),
    ("这个函数是做什么的？", "question workspace"),
    ("你好", "greeting"),
    ("谢谢！", "greeting"),
    ("修复 utils.py 中的 bug 并运行测试", "artifact change execution tests"),
    ("在后台启动开发服务器", "execution process"),  # starting the dev server writes no code
    ("开发一个服务器程序", "artifact source"),
    ("提交代码到新分支", "commit execution git workspace"),
    ("把这个任务委派给一个子代理", "delegation workspace"),
    ("分析一下这个项目的目录结构", "analysis workspace"),
    ("首先读取 main.py，然后重构解析器，最后运行测试", "analysis artifact execution multistep tests"),
    ("请帮我写一个 Python 函数计算斐波那契数列", "artifact source workspace"),
    ("把结果保存到 results.json", "artifact"),
    ("今天天气怎么样？", "question"),
    ("用 pytest 跑一下 tests/test_api.py", "execution tests workspace"),
    # Adversarial: trigger words inside identifiers, file names, URLs, shouting, a greeting before the work
    ("Explain what create_file() in utils.py does", "analysis workspace"),
    ("Open run_tests.py and tell me what it checks", "analysis"),
    ("Read https://example.org/create-new-file.html and summarize it", "analysis"),
    ("RUN THE TESTS", "execution tests workspace"),
    ("Hi! Run the tests please", "execution tests workspace"),
    ("你好，帮我运行测试", "execution tests"),
]


@pytest.mark.parametrize(("request_text", "tags"), REQUESTS, ids=[r[0][:40] for r in REQUESTS])
def test_classify_intent(request_text: str, tags: str) -> None:
    decision = classify_intent(request_text)
    assert decision.tags == frozenset(tags.split()), (sorted(decision.tags), decision.rules)
    # Every tag is explained by a named rule that gave it.
    for tag in decision.tags - {"multistep"}:
        assert any(tag in rule.tags for rule in RULES if rule.name in decision.rules), tag


def test_request_table_is_large_and_bilingual() -> None:
    chinese = [r for r, _ in REQUESTS if any("\u4e00" <= ch <= "\u9fff" for ch in r)]
    assert len(REQUESTS) >= 40 and len(chinese) >= 15


def _offered(request: str) -> set[str]:
    """The tools beyond the core ones a run offers its model for ``request`` (as the runtime routes it)."""
    tools = list(default_registry())
    core = {t.name for t in tools if "core" in t.tags}
    return set(select_tool_names(tools, classify_intent(without_prohibitions(request)))) - core


# What the user sees: the tools the model is offered, and the evidence the run needs before it may say
# ``completed`` (a request that forbids something asks for none of it).
USER_VISIBLE: list[tuple[str, set[str], tuple[str, ...]]] = [
    ("你好", set(), ()),
    ("Tell me a joke", set(), ()),
    ("Create hello.py that prints hello", {"git_diff", "git_status"}, ("artifact", "source")),
    ("Run the tests", set(), ("execution", "tests")),
    ("Remember that I prefer tabs over spaces", {"remember", "recall", "forget"}, ()),
    ("Start the dev server in the background and tail the logs", {"process_start", "process_poll", "process_cancel"},
     ("execution",)),
    ("在后台启动开发服务器", {"process_start", "process_poll", "process_cancel"}, ("execution",)),
    ("Delegate a security review of auth.py to a sub-agent", {"spawn_agent"}, ("inspection",)),
    ("First read main.py, then refactor the parser, then run the tests", {"git_diff", "git_status", "update_plan"},
     ("artifact", "execution", "tests")),
    ("Benchmark bubble sort vs quicksort and write a report", {"git_diff", "git_status", "update_plan"},
     ("artifact", "execution", "report", "benchmark")),
    # Adversarial: what the request forbids, or only names, is not asked for.
    ("Don't create any files; just explain what main.py does", set(), ("inspection",)),
    ("Please do not run anything, only read config.yaml", set(), ("inspection",)),
    ("不要修改任何文件，只告诉我 main.py 做了什么", set(), ("inspection",)),
    ("Do not commit; just show me the git diff", {"git_diff", "git_status"}, ("inspection",)),
    ("Explain what create_file() in utils.py does", set(), ("inspection",)),
    ("Open run_tests.py and tell me what it checks", set(), ("inspection",)),
    ("Read https://example.org/create-new-file.html and summarize it", set(), ()),
]


@pytest.mark.parametrize(("request_text", "tools", "kinds"), USER_VISIBLE, ids=[r[0][:40] for r in USER_VISIBLE])
def test_what_the_user_sees(request_text: str, tools: set[str], kinds: tuple[str, ...]) -> None:
    assert _offered(request_text) == tools
    assert derive_requirements(request_text).kinds == kinds


# Known misclassifications a user would notice; strict, so fixing one fails here until it moves up.
KNOWN_WRONG: list[tuple[str, tuple[str, ...], str]] = [
    ("Remember that I prefer pytest", (), "naming a test runner in a preference asks to run tests"),
    ("记住我喜欢用 pytest", (), "naming a test runner in a preference asks to run tests"),
    ("What does `git commit --amend` do?", (), "a question about a command asks to run one"),
]


@pytest.mark.parametrize(("request_text", "kinds", "why"), [
    pytest.param(r, k, why, marks=pytest.mark.xfail(strict=True, reason=why)) for r, k, why in KNOWN_WRONG])
def test_known_misclassifications(request_text: str, kinds: tuple[str, ...], why: str) -> None:
    assert derive_requirements(request_text).kinds == kinds, why


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


def test_the_evidence_gate_uses_the_decision_it_is_given() -> None:
    """One classification per run: the gate's requirements follow the decision the runtime passes in."""
    request = "Run the tests"
    assert derive_requirements(request).kinds == ("execution", "tests")
    greeting = classify_intent("Hello!")
    assert isinstance(greeting, IntentDecision)
    assert derive_requirements(request, decision=greeting).kinds == ()


# The same request in English and Chinese owes the same evidence (a source file written and run).
HELLO_IN_TWO_LANGUAGES: list[tuple[str, str]] = [
    ("Create hello.py that prints hello world and run it", "创建 hello.py，打印 hello world 并运行它"),
    ("Create hello.py that prints hello world and run it", "创建一个打印 hello world 的 hello.py 并运行它"),
    ("Write build.sh that compiles main.c, then run it", "编写 build.sh 来编译 main.c，然后运行它"),
]


@pytest.mark.parametrize(("english", "chinese"), HELLO_IN_TWO_LANGUAGES)
def test_same_request_owes_same_evidence_in_english_and_chinese(english: str, chinese: str) -> None:
    kinds = ("artifact", "source", "execution", "tests", "build", "report")
    owed_en = [kind for kind in kinds if derive_requirements(english).needs(kind)]
    owed_zh = [kind for kind in kinds if derive_requirements(chinese).needs(kind)]
    assert "source" in owed_en
    assert owed_zh == owed_en
