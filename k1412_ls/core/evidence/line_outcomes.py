"""What one command line proved: per test suite, per build, per program, from statuses and summaries.

Inputs are the facts of one ``run_command`` event: the line (parsed by the
shared shell model), its exit code, the statuses K1412 observed for each
program it started (``observed``) and the test summary read from its
output (``tests``). Rules, in order of trust:

1. an observed status belongs to the invocation whose program and literal
   words it matches; it is used unless the line tampered with descriptors,
   traps or functions;
2. otherwise an invocation whose status reaches the line's exit code (see
   ``k1412_ls.shell``) takes the line's exit code, if the line parsed cleanly;
3. otherwise its status is unknown: it proves nothing either way.

A test invocation passes only with status 0 and a summary that shows at
least one test passed and none failed, from a line that prints no
test-summary-like text of its own. It fails on a non-zero status (other
than "no tests collected") or a summary showing failures, whatever the
line's exit code. A build passes with status 0 and fails otherwise.
"""

from __future__ import annotations

import posixpath
from dataclasses import dataclass, replace
from typing import Any

from k1412_ls.core.evidence.invocations import CommandShape, Invocation, classify_argv
from k1412_ls.shell import parse_line
from k1412_ls.text.runner_summaries import COMPILE_ERROR, Suite, Tally

NO_TESTS_STATUS = 5  # pytest and unittest (3.12+): nothing collected
PYTHONS = frozenset({"python", "python2", "pypy", "pypy3"})  # versioned names are read as ``python``
STOPPED_ON_PURPOSE = frozenset({130, 137, 143, -2, -9, -15})  # SIGINT, SIGKILL, SIGTERM


@dataclass(frozen=True)
class TestOutcome:
    """One test invocation's verdict: ``pass``, ``fail``, ``none`` (ran no test) or ``unknown``."""

    suite: Suite
    outcome: str
    why: str = ""
    import_dir: str | None = None  # the directory Python put first on the import path (``python3 -m pytest``)


@dataclass(frozen=True)
class BuildOutcome:
    program: str
    sources: tuple[str, ...]
    argv: tuple[str, ...]
    ok: bool | None


@dataclass(frozen=True)
class LineOutcome:
    """Everything a command line proved or disproved."""

    tests: tuple[TestOutcome, ...] = ()
    builds: tuple[BuildOutcome, ...] = ()
    committed: bool = False
    executed: bool = False          # some program that runs code exited 0 (known status)
    failed_programs: tuple[Invocation, ...] = ()  # runs/inline programs with a known non-zero status


def _matches(invocation: Invocation, argv: list[str]) -> bool:
    words = list(invocation.argv)
    if not argv or not words:
        return False
    if invocation.program != classify_argv(argv).program:
        return False
    literal = [w for w in words[1:] if w]
    return all(w in argv[1:] for w in literal)


def _where(run_cwd: str, invocation_cwd: str) -> str:
    if invocation_cwd.startswith("/") or run_cwd in ("", "."):
        return invocation_cwd
    return posixpath.normpath(posixpath.join(run_cwd, invocation_cwd))


def line_outcome(shape: CommandShape, exit_code: int | None, stopped: bool,
                 observed: list[dict[str, Any]], tally: Tally, output: str = "", cwd: str = ".") -> LineOutcome:
    """Judge one executed line (see the module docstring)."""
    trusted = shape.trusted_status
    compile_error = bool(COMPILE_ERROR.search(output))
    records = [r for r in observed if isinstance(r.get("argv"), list) and isinstance(r.get("status"), int)] \
        if trusted else []
    used: set[int] = set()
    summary = Tally() if shape.faked_summary else tally

    def status_of(invocation: Invocation) -> int | None:
        for index, record in enumerate(records):
            if index not in used and _matches(invocation, [str(a) for a in record["argv"]]):
                used.add(index)
                return int(record["status"])
        if stopped:
            return None
        if invocation.reaches and trusted and exit_code is not None:
            return exit_code
        return None

    tests: list[TestOutcome] = []
    builds: list[BuildOutcome] = []
    committed = executed = False
    failed: list[Invocation] = []
    for invocation in shape.invocations:
        if invocation.role in ("print", "probe", "setup", "vcs", "wrapper"):
            continue
        status = status_of(invocation)
        if invocation.program == "make" and status == 0 and not invocation.lenient and not compile_error:
            builds.extend(_echoed_compiles(output))
        if invocation.role == "test" and invocation.suite is not None:
            where = _where(cwd, invocation.cwd)
            suite = invocation.suite.rebased(where)
            outcome = replace(_test_outcome(suite, status, stopped, summary),
                              import_dir=_import_dir(invocation, where))
            tests.append(outcome)
            executed = executed or (status == 0 and outcome.outcome == "pass")
        elif invocation.role == "build":
            ok: bool | None = None if status is None and not stopped else status == 0
            if compile_error:
                ok = False
            elif invocation.lenient and ok:
                ok = None  # ``make -i`` exits 0 whatever failed
            builds.append(BuildOutcome(invocation.program, invocation.sources, invocation.argv, ok))
        elif invocation.role == "commit":
            committed = committed or status == 0
        else:
            if status == 0:
                executed = True
            elif invocation.background and status in STOPPED_ON_PURPOSE:
                pass  # a server started with `&` and killed by the same line once it was checked
            elif status is not None or stopped:
                failed.append(invocation)
    # Programs the parse could not see (inside scripts, make, xargs, sudo) still report their failures, and a
    # compiler K1412 saw exit 0 inside them (``make test`` running gcc) compiled what it names.
    for index, record in enumerate(records):
        if index in used:
            continue
        extra = classify_argv([str(a) for a in record["argv"]])
        if record["status"] == 0:
            if extra.role == "build" and extra.sources and not compile_error:
                builds.append(BuildOutcome(extra.program, extra.sources, extra.argv, True))
            continue
        if extra.role == "test" and extra.suite is not None:
            tests.append(replace(_test_outcome(extra.suite, int(record["status"]), False, summary),
                                 import_dir=_import_dir(extra, cwd)))
        elif extra.role == "build":
            builds.append(BuildOutcome(extra.program, extra.sources, extra.argv, False))
    if stopped and not tests and not builds and not failed:
        failed.extend(i for i in shape.invocations if i.proves_execution)
    return LineOutcome(tuple(tests), tuple(builds), committed, executed, tuple(failed))


def _echoed_compiles(output: str) -> list[BuildOutcome]:
    """The compiler lines make echoed before running them: make stops at the first failing one (without
    ``-i``), so when it exits 0 every one of them compiled."""
    found: list[BuildOutcome] = []
    for line in output.splitlines()[:2000]:
        if not line[:1].isalpha():
            continue
        parsed = parse_line(line)
        if not parsed.parsed or len(parsed.commands) != 1:
            continue
        echoed = classify_argv(parsed.commands[0].argv)
        if echoed.role == "build" and echoed.sources and echoed.program != "make":
            found.append(BuildOutcome(echoed.program, echoed.sources, echoed.argv, True))
    return found


def _import_dir(invocation: Invocation, where: str) -> str | None:
    """Where ``python3 -m RUNNER`` (the invocation's directory) or ``python3 DIR/test_x.py`` (the script's)
    imports from first; None for a runner started as its own program."""
    if invocation.program not in PYTHONS or invocation.suite is None:
        return None
    family = invocation.suite.family
    if family.startswith("file:"):
        script_dir = posixpath.dirname(family[5:])
        return script_dir if script_dir.startswith("/") else posixpath.normpath(posixpath.join(where, script_dir))
    return where


def _test_outcome(suite: Suite, status: int | None, stopped: bool, summary: Tally) -> TestOutcome:
    if stopped:
        return TestOutcome(suite, "fail", "it was stopped before it finished")
    if summary.failing:
        return TestOutcome(suite, "fail", f"{summary.failed + summary.errors} failed")
    if status is not None and status not in (0, NO_TESTS_STATUS):
        return TestOutcome(suite, "fail", f"exit {status}")
    if suite.collect_only:
        return TestOutcome(suite, "none", "it only listed tests")
    if status == NO_TESTS_STATUS or (summary.found and summary.passed == 0):
        return TestOutcome(suite, "none", "no test ran")
    if status is None:
        return TestOutcome(suite, "unknown", "its exit status was discarded by the command line")
    if suite.status_only and not summary.found:
        return TestOutcome(suite, "pass")  # a compiled test program or project script: its status decides
    if not summary.clean_pass:
        return TestOutcome(suite, "unknown", "no test summary shows how many tests ran")
    if summary.filtered:
        narrowed = Suite(suite.family, suite.targets, suite.narrowed or "some tests were deselected",
                         suite.collect_only, suite.selector)
        return TestOutcome(narrowed, "pass")
    return TestOutcome(suite, "pass")
