"""What a request owes (policy agent-loop-v4): fail closed on unfamiliar phrasing, nothing owed for chat."""

from __future__ import annotations

import pytest

from k1412_ls.core.evidence import derive_requirements


@pytest.mark.parametrize(("request_text", "kinds", "question"), [
    # The phrasings the earlier gate did not recognise (issue examples), each now owes real work.
    ("修一下 calc.py 的 bug", "artifact", False),
    ("The tests are failing, please fix", "artifact tests", False),
    ("Bump the version in pyproject.toml", "artifact", False),
    ("删掉 temp.txt", "artifact deletion", False),
    ("Insert a license header into main.py", "artifact", False),
    ("Lint the code with ruff", "execution", True),
    ("Does main.c compile?", "execution build", True),
    ("Do the tests still pass after my change?", "tests", True),
    ("把版本号升一下", "artifact", False),
    ("prog.c 编得过吗", "execution build", True),
    ("slug() should be called slugify(), everywhere", "inspection", True),
    # Honest requests the earlier gate misread.
    ("Add unit tests for calc.py and run them", "artifact source execution tests", False),
    ("write a test report", "artifact report", True),  # a report changes nothing else: findings allowed
    ("commit my changes", "commit", False),
    ("Make sure the app starts", "execution", True),
    ("Run the test suite and write a test report to report.md. Don't change any code.",
     "artifact execution tests report", True),
    ("运行测试并把结果写成报告 report.md（先不要改代码）", "artifact execution tests report", True),
    # Questions owe a read of what they ask about.
    ("What does calc.py do?", "inspection", True),
    ("calc.py 里的 mul 是怎么实现的？", "inspection", True),
    ("src 里的 TODO 都写了些什么？", "inspection", True),
    # Chat owes nothing.
    ("Hello!", "", True),
    ("Hello, my project is called Zebra", "", True),
    ("What is the difference between a list and a tuple in Python?", "", True),
])
def test_obligations(request_text: str, kinds: str, question: bool) -> None:
    requirements = derive_requirements(request_text)
    assert requirements.kinds == tuple(kinds.split()), requirements.rules
    assert requirements.question is question


def test_inputs_are_not_change_targets() -> None:
    assert derive_requirements("Add unit tests for calc.py and run them").inputs == ("calc.py",)
    assert derive_requirements("写一个脚本，统计 words.txt 中的单词数").inputs == ("words.txt",)
    assert derive_requirements("创建一个名为 data.csv 的文件").inputs == ()
    assert derive_requirements("给 config.json 加一个字段").change_targets == ("config.json",)


@pytest.mark.parametrize(("request_text", "destinations"), [
    ("Save the timings to bench.md", ("bench.md",)),
    ("Run bench.py and record the results in results.md", ("results.md",)),
    ("跑一下 bench.py，把结果写进 results.md", ("results.md",)),
    ("Bump the version in pyproject.toml to 0.2.0", ()),
    ("Fix the bug in calc.py", ()),
])
def test_destinations_of_results(request_text: str, destinations: tuple[str, ...]) -> None:
    assert derive_requirements(request_text).destinations == destinations


def test_named_files_resolve_exactly_and_are_recorded() -> None:
    files = {"config.json": True, "README.md": True}

    def resolve(name: str) -> tuple[str, bool]:
        if name == "README":
            return "README.md", True
        return name, files.get(name, False)

    requirements = derive_requirements("Update config.json and the README", resolve)
    assert requirements.targets == ("config.json", "README.md")
    replayed = derive_requirements("Update config.json and the README", recorded=requirements.as_record())
    assert replayed.targets == requirements.targets and replayed.existing == requirements.existing
