"""Approval rules fail closed on words, and ``untrusted`` inspection is an allow list of (program, options).

Every case has a positive control: without the rule the same command runs unasked (so the question comes from
the rule, not from the network or ``.git``), and for ``untrusted`` the same program without the option runs
unasked (so the question comes from the option).
"""

from __future__ import annotations

import shutil
import threading
from pathlib import Path

import pytest

from k1412_ls.tools.approval.approval_policy import (
    ApprovalGate,
    ApprovalPolicy,
    ApprovalRequest,
    Decision,
    PrefixRule,
)
from k1412_ls.tools.approval.inspection import is_inspection, sed_only_prints
from k1412_ls.tools.errors import ToolError
from k1412_ls.tools.sandbox.command_sandbox import SandboxPolicy

PUSH_SCRIPT = "#!/bin/sh\ngit push origin main\n"


class Asker:
    def __init__(self) -> None:
        self.asked: list[ApprovalRequest] = []

    def __call__(self, request: ApprovalRequest, cancel: threading.Event) -> Decision | None:
        self.asked.append(request)
        return Decision.ALLOW_ONCE


def decide(workspace: Path, command: str, *, forbid: str | None = "git push", policy: str = "on-request") -> str:
    """"forbid", "ask" or "run": what the gate does with ``command`` (network on and .git writable, so only the
    rules and the policy ask)."""
    rules = (PrefixRule(tuple(forbid.split()), "forbid"),) if forbid else ()
    asker = Asker()
    gate = ApprovalGate(policy=ApprovalPolicy(policy, rules), sandbox=SandboxPolicy(network=True, git_writable=True),
                        approver=asker, workspace=workspace)
    try:
        gate.check(command)
    except ToolError as error:
        assert "forbidden by the approval rule" in str(error), error
        return "forbid"
    return "ask" if asker.asked else "run"


def plant(workspace: Path, files: dict[str, str]) -> None:
    for rel, text in files.items():
        path = workspace / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)
        path.chmod(0o755)


# (files in the workspace, command, decision under ``forbid git push``); without the rule every one runs unasked.
FAIL_CLOSED: list[tuple[dict[str, str], str, str]] = [
    # Words that are not literal after parsing, where the rule's words stand.
    ({}, "s=push; git $s", "ask"),
    ({}, 'git "$s" origin', "ask"),
    ({}, "git {push,}", "ask"),
    ({}, "git p{u,}sh origin main", "ask"),
    ({}, "git pus?", "ask"),
    ({}, "git pu[s]h", "ask"),
    ({}, "git $(printf push)", "ask"),
    ({}, "git `printf push`", "ask"),
    ({}, "$(printf git) push", "ask"),
    ({}, "g=git; $g push", "ask"),
    ({}, "chronic $g push", "ask"),
    ({}, "exec $g push", "ask"),
    ({}, 'bash -c "$cmd"', "ask"),
    ({}, 'sh -c "git $s"', "ask"),
    ({}, 'eval "$cmd"', "ask"),
    # git: aliases from any config (the repository's, one an earlier command wrote), the push family.
    ({".git/config": "[alias]\n\tp = push\n"}, "git p origin main", "forbid"),  # the repository's alias, read
    ({".git/config": "[include]\n\tpath = ../al.cfg\n", "al.cfg": "[alias]\n\tp = !git push\n"}, "git p", "forbid"),
    ({".git/config": "[alias]\n\tst = status\n"}, "git p origin main", "ask"),  # an alias from elsewhere
    ({".git/config": "[help]\n\tautocorrect = immediate\n"}, "git psuh", "ask"),  # git would run push
    ({}, "git -c alias.p=push p", "forbid"),
    ({}, "git send-pack origin main", "forbid"),
    ({}, "git http-push https://127.0.0.1:9/r main", "forbid"),
    ({}, "git remote-ext origin 'sh -c x'", "forbid"),
    ({}, "git subtree push --prefix=lib origin main", "forbid"),
    ({}, "exec git push", "forbid"),
    ({}, "busybox sh -c 'git push'", "forbid"),
    # Sourced, generated and shebang-less scripts; scripts that run scripts.
    ({"deploy.sh": PUSH_SCRIPT}, "source ./deploy.sh", "forbid"),
    ({"deploy.sh": PUSH_SCRIPT}, ". deploy.sh", "forbid"),
    ({}, "source $f", "ask"),
    ({}, "bash $f", "ask"),
    ({}, "printf 'git push\\n' > gen.sh && . ./gen.sh", "ask"),
    ({"run": "git push\n"}, "./run", "forbid"),
    ({"a.sh": "#!/bin/sh\n. ./b.sh\n", "b.sh": "git push\n"}, "bash a.sh", "forbid"),
    ({"a.sh": "#!/bin/sh\ns=push\ngit $s\n"}, "sh a.sh", "ask"),
    # make: functions and assignments that run commands, includes, recipes with make variables.
    ({"Makefile": "X := $(shell git push)\nall:\n\t@echo hi\n"}, "make", "forbid"),
    ({"Makefile": "X != git push origin\nall:\n\t@echo hi\n"}, "make all", "forbid"),
    ({"Makefile": "include other.mk\nall:\n\t@echo hi\n"}, "make", "ask"),
    ({"Makefile": "SHELL := ./myshell\nall:\n\t@echo hi\n"}, "make", "ask"),
    ({"Makefile": "GIT = git\nall:\n\t$(GIT) push\n"}, "make", "ask"),
    ({"Makefile": "all:\n\t./deploy.sh\n", "deploy.sh": PUSH_SCRIPT}, "make", "forbid"),
    # package.json scripts: another alias mechanism a repository (or an earlier command) writes.
    ({"package.json": '{"scripts": {"ship": "git push origin main"}}'}, "npm run ship", "forbid"),
    ({"package.json": '{"scripts": {"posttest": "git push"}}'}, "npm test", "forbid"),
    ({"package.json": '{"scripts": {"ship": "./deploy.sh"}}', "deploy.sh": PUSH_SCRIPT}, "yarn ship", "forbid"),
    ({"package.json": '{"scripts": {"ship": "git $(echo push)"}}'}, "pnpm run ship", "ask"),
    ({}, "npm run $task", "ask"),
    ({}, "printf '{}' > package.json && npm run ship", "ask"),
]


@pytest.mark.parametrize(("files", "command", "expected"), FAIL_CLOSED, ids=[c for _, c, _ in FAIL_CLOSED])
def test_a_rule_is_never_dodged_by_words_the_check_cannot_read(tmp_path: Path, files: dict[str, str], command: str,
                                                               expected: str) -> None:
    plant(tmp_path, files)
    assert decide(tmp_path, command) == expected
    # Positive control: without the rule the same line runs without a question.
    assert decide(tmp_path, command, forbid=None) == "run"


@pytest.mark.parametrize("command", [
    "git status", "echo $HOME", "ls *.py", "cat {a,b}.txt", "git log --oneline -3", "git pushy-not-a-rule-word",
])
def test_words_no_rule_names_stay_unasked(tmp_path: Path, command: str) -> None:
    """Fail closed only where a rule's words stand: a rule for ``rm`` is not in doubt about ``git $x``."""
    assert decide(tmp_path, command, forbid="rm") == "run"
    assert decide(tmp_path, "git $x", forbid="rm") == "run"


def test_the_question_says_why_the_rule_cannot_be_checked(tmp_path: Path) -> None:
    asker = Asker()
    gate = ApprovalGate(policy=ApprovalPolicy("on-request", (PrefixRule(("git", "push"), "forbid"),)),
                        sandbox=SandboxPolicy(network=True, git_writable=True), approver=asker, workspace=tmp_path)
    gate.check("git {push,}")
    assert "not literal" in asker.asked[0].question() and "'git push'" in asker.asked[0].question()


# (inspection, the same program with an option that writes or runs): the first runs unasked under ``untrusted``
# (the positive control), the second is asked.
UNTRUSTED: list[tuple[str, str]] = [
    ("sort -n a.txt", "sort -S 1k --compress-program=sh a.txt"),
    ("sort -n a.txt", "sort --compress=sh a.txt"),  # an abbreviation GNU getopt accepts
    ("sort -k2 a.txt", "sort -o README.md a.txt"),
    ("sort -r a.txt", "sort -roREADME.md a.txt"),
    ("sort a.txt", "sort --output=x a.txt"),
    ("sort a.txt", "sort -T . a.txt"),
    ("uniq a.txt", "uniq a.txt out.txt"),
    ("uniq -c a.txt", "uniq -c -- a.txt out.txt"),
    ("find . -name '*.py' -type f", "find . -maxdepth 0 -execdir sh -c 'echo x' \\;"),
    ("find . -maxdepth 1 -print", "find . -exec cat {} +"),
    ("find . -type f", "find . -ok rm {} \\;"),
    ("find . -name x", "find . -name x -delete"),
    ("find . -ls", "find . -fprint out"),
    ("find . -ls", "find . -fls out"),
    ("sed -n 1,5p a.txt", "sed -n '1e echo x > pwn' a.txt"),
    ("sed 's/a/b/g' a.txt", "sed 's/a/id/e' a.txt"),
    ("sed -n '/x/p' a.txt", "sed 'w out' a.txt"),
    ("sed -e 's/a/b/2' a.txt", "sed -e 's/a/b/w out' a.txt"),
    ("sed 10q a.txt", "sed -n '1W out' a.txt"),
    ("sed -E 's/(a)/\\1/' a.txt", "sed -i 's/a/b/' a.txt"),
    ("sed -n p a.txt", "sed -f script.sed a.txt"),
    ("awk '{print $1}' a.txt", "awk 'BEGIN{system(\"echo x\")}'"),
    ("awk -F: '{print $2}' a.txt", "awk '{print > \"out\"}' a.txt"),
    ("awk 'NR==1' a.txt", "awk '{print | \"sh\"}' a.txt"),
    ("awk '{print}' a.txt", "awk 'BEGIN{\"id\" | getline x}'"),
    ("awk '{print}' a.txt", "awk -f prog.awk a.txt"),
    ("awk '{print}' a.txt", "gawk -l filefuncs '{print}' a.txt"),
    ("git diff --stat", "git diff --output=pwn"),
    ("git log -1", "git log -1 --output=pwn"),
    ("git status", "git -c core.fsmonitor='echo x' status"),
    ("git status --short", "git --exec-path=/tmp status"),
    ("git log --oneline -3", "git -C /tmp log"),
    ("git log -1", "git -c core.pager=cat --paginate log -1"),
    ("git diff", "git diff --ext-diff"),
    ("git grep -n changed", "git grep -O'echo x' -e changed"),
    ("git grep -e changed", "git grep --open-files-in-pager=cat -e changed"),
    ("git branch -a", "git branch newbranch"),
    ("rg -n zzz .", "rg --pre sh -e zzz pre.sh"),
    ("rg zzz", "rg -z zzz"),
    ("xxd a.bin", "xxd -r a.hex out.bin"),
    ("tree -L 2", "tree -o out.txt"),
    ("date +%s", "date -s 2020-01-01"),
    ("date -u", "date 0101000020"),
    ("LC_ALL=C sort a.txt", "LD_PRELOAD=./x.so sort a.txt"),
    ("timeout 5 cat a.txt", "strace -o out cat a.txt"),
    ("cat a.txt", "echo a.txt | xargs cat"),
    ("cat a.txt", "less a.txt"),
    ("file a.txt", "file -C -m magic"),
    ("grep -rn foo .", "grep -rn foo . --devices=read --include=x > out.txt"),
    # A word that is not literal may expand to any option (a file named --compress-program=sh, a variable).
    ("sort a.txt", "sort *.txt"),
    ("sort a.txt", 'sort "$opt" a.txt'),
    ("uniq a.txt", "uniq *.txt"),
    ("find . -type f", "find $where -type f"),
    ("sed -n 1p a.txt", 'sed "$script" a.txt'),
    ("awk '{print}' a.txt", 'awk "$program" a.txt'),
    ("git log -1", "git log $range"),
    ("cat a.txt", "cat a.txt; $reader a.txt"),
]


@pytest.mark.parametrize("command", ["cat *.txt", 'grep -n foo "$f"', "ls -la $dir", "wc -l {a,b}.txt"])
def test_readers_without_any_dangerous_option_take_words_that_are_not_literal(tmp_path: Path, command: str) -> None:
    assert decide(tmp_path, command, forbid=None, policy="untrusted") == "run"


@pytest.mark.parametrize(("safe", "unsafe"), UNTRUSTED, ids=[u for _, u in UNTRUSTED])
def test_untrusted_inspection_is_an_allow_list_of_programs_and_options(tmp_path: Path, safe: str,
                                                                       unsafe: str) -> None:
    assert decide(tmp_path, safe, forbid=None, policy="untrusted") == "run"
    assert decide(tmp_path, unsafe, forbid=None, policy="untrusted") == "ask"


@pytest.mark.parametrize(("script", "prints"), [
    ("1,5p", True), ("s/a/b/g;s|x|y|2", True), ("/start/,/end/d", True), ("$!N;P;D", True), ("y/abc/xyz/", True),
    ("1i\\\nhello", True), ("s/a\\/e/b/", True), ("s/a/b/e", False), ("1e id", False), ("w out", False),
    ("s/a/b/gw out", False), ("$W out", False), ("1!e date", False), ("s/x/y", False), ("v;e id", False),
])
def test_sed_scripts_are_read_command_by_command(script: str, prints: bool) -> None:
    assert sed_only_prints(script) is prints


def test_inspection_never_takes_an_empty_or_unknown_program() -> None:
    assert not is_inspection(["", "a.txt"]) and not is_inspection(["python3", "-c", "print(1)"])
    assert is_inspection(["cat", "-n", "a.txt"]) and not is_inspection(["cat", "--bogus", "a.txt"])


def test_a_copy_or_hard_link_of_a_program_a_rule_names_is_that_program(tmp_path: Path) -> None:
    git = shutil.which("git")
    assert git is not None
    shutil.copy(git, tmp_path / "g")
    (tmp_path / "g").chmod(0o755)
    assert decide(tmp_path, "./g push origin main") == "forbid"
    assert decide(tmp_path, "./g push origin main", forbid=None) == "run"  # control: the copy runs without the rule
    (tmp_path / "other").write_bytes(b"\x7fELF" + b"\0" * 64)
    assert decide(tmp_path, "./other push") == "run"  # a program that is not git is not matched as git


@pytest.mark.parametrize("config", [
    "[core]\n\tfsmonitor = ./hook.sh\n", "[diff]\n\texternal = ./d.sh\n", '[diff "x"]\n\ttextconv = ./t.sh\n',
    '[filter "lfs"]\n\tclean = ./c.sh\n', "[include]\n\tpath = ../more.cfg\n",
])
def test_git_inspection_in_a_repository_whose_config_runs_programs_is_asked(tmp_path: Path, config: str) -> None:
    plant(tmp_path, {".git/config": "[core]\n\tbare = false\n"})
    assert decide(tmp_path, "git status", forbid=None, policy="untrusted") == "run"  # control: a plain config
    plant(tmp_path, {".git/config": config, "more.cfg": "[core]\n\tfsmonitor = ./hook.sh\n"})
    assert decide(tmp_path, "git status", forbid=None, policy="untrusted") == "ask"
