"""Every part of a request is owed: each file a change clause names, each value it sets, each function it
names when the run checked functions one by one; and the answer's own word that a part is not done."""

from __future__ import annotations

import pytest

from k1412_ls.core.evidence import CompletionGate, EvidenceLedger, derive_requirements
from k1412_ls.core.evidence.admissions import admits_unfinished
from k1412_ls.core.evidence.requested_values import requested_values
from k1412_ls.tools.facts import write_entry, write_facts
from tests.core.evidence.test_evidence_ledger import new_bus, read, run, tool


def complete(task: str, steps: list[tuple[str, str, str]], answer: str = "Done.") -> bool:
    ledger = EvidenceLedger()
    bus = new_bus(task, [ledger.record])
    for kind, path, text in steps:
        if kind == "write":
            tool(bus, "write_file", True, write_facts([write_entry(path, text, "update")]))
        elif kind == "read":
            read(bus, path)
        else:
            run(bus, path, 0, text)
    return CompletionGate(derive_requirements(task)).check(ledger, answer).complete


@pytest.mark.parametrize(("task", "each"), [
    ("Rename fetch_data to load_data in api.py and cli.py.", ("api.py", "cli.py")),
    ("把 api.py 和 cli.py 里的 fetch_data 都改名为 load_data。", ("api.py", "cli.py")),
    ("修一下 calc.py 的 add，顺便在 CHANGELOG.md 的 Unreleased 里记一笔。", ("calc.py", "CHANGELOG.md")),
    ("Fix add in calc.py and run test_calc.py.", ("calc.py",)),  # a file to run is not a file to change
    ("Fix parse() in utils.py which main.py calls.", ("utils.py",)),  # context, not a place to change
    ("What does api.py do and why does cli.py import it?", ()),  # a question owes no change
])
def test_the_files_each_change_clause_names(task: str, each: tuple[str, ...]) -> None:
    assert derive_requirements(task).each_target == each


def test_a_change_made_in_one_of_two_named_files_is_part_of_the_work() -> None:
    task = "Rename fetch_data to load_data in api.py and cli.py."
    done = [("write", "api.py", "def load_data(): pass\n"), ("write", "cli.py", "from api import load_data\n"),
            ("read", "api.py", ""), ("read", "cli.py", "")]
    assert complete(task, done)  # control: both changed and read back
    assert not complete(task, [done[0], done[2]])


@pytest.mark.parametrize(("task", "values"), [
    ("In config.ini set timeout to 30 and retries to 5.", ("30", "5")),
    ("把 config.ini 里的 timeout 改成 30，retries 改成 5。", ("30", "5")),
    ("Set the ratio to 0.5.", ("0.5",)),
    ("Bump the version to 1.2.3", ()),  # a version is not one number
    ("Add 2 to the list in app.py", ()),
])
def test_values_a_request_sets(task: str, values: tuple[str, ...]) -> None:
    assert requested_values(task) == values


def test_a_value_no_changed_file_holds_was_not_set() -> None:
    task = "In config.ini set timeout to 30 and retries to 5."
    assert complete(task, [("write", "config.ini", "timeout = 30\nretries = 5\n"), ("read", "config.ini", "")])
    assert not complete(task, [("write", "config.ini", "timeout = 30\nretries = 3\n"), ("read", "config.ini", "")])


def test_checking_one_of_two_named_functions_by_name_checks_part_of_the_work() -> None:
    task = "Both add() and sub() in maths.py are wrong. Fix both."
    fixed = ("write", "maths.py", "def add(a, b):\n    return a + b\n\n\ndef sub(a, b):\n    return a - b\n")
    both = 'python3 -c "from maths import add, sub; assert add(2, 3) == 5 and sub(3, 2) == 1"'
    one = 'python3 -c "from maths import add; assert add(2, 3) == 5"'
    assert complete(task, [fixed, ("run", both, "")])
    assert complete(task, [fixed, ("run", "python3 -m pytest -q", "..\n2 passed in 0.01s\n")])
    assert not complete(task, [fixed, ("run", one, "")])


@pytest.mark.parametrize(("answer", "admits"), [
    ("I fixed add() only. I did not fix sub(): that part is not done.", True),
    ("add 已修复。发布这一步没有做：沙箱没有网络。", True),
    ("第一次运行 mul 仍失败，最终运行 3 passed。", False),
    ("I changed nothing, as asked.", False),
    ("Fixed add(); I did not touch the tests.", False),
    ("已修复 add，测试 2 passed。", False),
])
def test_an_answer_that_says_part_is_not_done(answer: str, admits: bool) -> None:
    assert bool(admits_unfinished(answer)) is admits


def test_the_words_a_document_should_say_ask_for_no_run() -> None:
    assert derive_requirements("Add a 'Testing' section to README.md that says to run `python3 -m pytest -q`.").kinds \
        == ("artifact",)
    assert derive_requirements("Add a Testing section to README.md, then run `python3 -m pytest -q`.").needs("tests")
