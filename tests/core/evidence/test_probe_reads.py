"""A question answered by running the code it names, or by git commands that only show history, is answered
from what the run observed; a probe that loads some other module, or prints a constant, read nothing."""

from __future__ import annotations

import pytest

from k1412_ls.core.evidence import CompletionGate, EvidenceLedger, derive_requirements
from k1412_ls.core.evidence.inline_code import imported_files
from k1412_ls.core.evidence.invocations import command_shape
from tests.core.evidence.test_evidence_ledger import new_bus, run


def verdict(task: str, command: str, output: str, answer: str, exit_code: int = 0) -> bool:
    ledger = EvidenceLedger()
    bus = new_bus(task, [ledger.record])
    run(bus, command, exit_code, output)
    return CompletionGate(derive_requirements(task)).check(ledger, answer).complete


@pytest.mark.parametrize(("language", "code", "files"), [
    ("python3", "from calc import add; print(add(2, 3))", {"calc.py", "calc/__init__.py"}),
    ("python3", "import pkg.mod as m\nprint(m.f())", {"pkg/mod.py", "pkg/mod/__init__.py"}),
    ("python3", "from . import x", set()),  # relative to no package: names nothing
    ("python3", "print(", set()),  # not Python: nothing known
    ("node", "console.log(require('./lib/price').total([1]))", {"lib/price.js"}),
    ("node", "import('../x.mjs').then(m => m.f())", {"../x.mjs"}),
    ("node", "const fs = require('fs'); fs.readFileSync(0)", set()),  # a built-in module is not a workspace file
])
def test_the_files_an_inline_program_loads(language: str, code: str, files: set[str]) -> None:
    assert set(imported_files(language, code)) == files


@pytest.mark.parametrize("task", ["What does add(2, 3) in calc.py return right now? Don't change anything.",
                                  "calc.py 里的 add(2, 3) 现在返回什么？不要修改任何东西。"])
def test_a_question_answered_by_calling_the_named_code(task: str) -> None:
    probe = 'python3 -c "from calc import add; print(add(2, 3))"'
    assert verdict(task, probe, "-1\n", "add(2, 3) returns -1.")
    # Controls: a probe of another module, or one that prints a constant, or one that failed, read nothing.
    assert not verdict(task, 'python3 -c "from other import add; print(add(2, 3))"', "-1\n", "It returns -1.")
    assert not verdict(task, "python3 -c \"print(-1)\"", "-1\n", "It returns -1.")
    assert not verdict(task, probe, "Traceback ...\nImportError\n", "It returns -1.", exit_code=1)


def test_a_request_that_forbids_every_change_owes_no_change() -> None:
    req = derive_requirements("Add up the totals in calc.py for me, but don't change anything.")
    assert req.question and not req.needs("artifact") and req.constraints.no_change


@pytest.mark.parametrize("command", ["git rev-list --count HEAD", "git cat-file -p HEAD", "git ls-tree HEAD",
                                     "git for-each-ref", "git merge-base main HEAD"])
def test_git_commands_that_only_show_the_repository_are_reads(command: str) -> None:
    assert command_shape(command).role == "probe"


def test_how_many_commits_is_answered_by_counting_them() -> None:
    task = "How many commits does this repository have?"
    assert verdict(task, "git rev-list --count HEAD", "1\n", "The repository has 1 commit.")
    assert not verdict(task, "echo 1", "1\n", "The repository has 1 commit.")  # control: printed, not counted


def test_a_quote_no_command_printed_is_made_up() -> None:
    task = "What is the message of the last commit in this repository?"
    assert verdict(task, "git log -1 --format=%s", "initial\n", "The last commit is 'initial'.")
    assert verdict(task, "git log -1 --format=%s", "initial\n", "`git log -1 --format=%s` printed: initial.")
    assert not verdict(task, "git log -1 --format=%s", "initial\n", "The last commit is 'fix login redirect'.")
