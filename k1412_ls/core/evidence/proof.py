"""What a run's tool events prove, read from its ledger: verifications, failures, reads and test scope.

The evidence rules (``rules.py``) and the figure checks (``figures.py``) are built on these
definitions:

- **verification of a path P written at seq w** (``verified``): a later read of exactly P, a later
  ``git_status``/``git_diff`` listing it, a later command that ran code and exited 0, a successful probe
  naming P, a later commit; a deletion K1412 itself saw needs nothing more;
- **an open failure** (``unresolved_failures``): a failed test suite with no later pass of a suite that
  covers it, a failed build of sources S with no later successful build of S, a program that exited
  non-zero with no later success of the same subject, a background process that failed;
- **a successful run** (``successful_runs``): a program that ran code and exited 0, with no test, build or
  program in its line failing; a healthy background process;
- **test scope** (``scope_ok``): the whole suite, every test file the workspace had, the subset the
  request names, or (for a request to write tests) the test files this run wrote.
"""

from __future__ import annotations

import posixpath
import re
from dataclasses import dataclass

from k1412_ls.core.evidence.invocations import Invocation, same_work
from k1412_ls.core.evidence.ledger import (
    FileState,
    LookEntry,
    RunEntry,
    WriteEntry,
    covers,
    same_path,
    written_files,
)
from k1412_ls.core.evidence.line_outcomes import BuildOutcome, TestOutcome
from k1412_ls.core.evidence.other_copies import other_copy
from k1412_ls.core.evidence.requirements import Requirements
from k1412_ls.shell import git_subcommand
from k1412_ls.text.runner_summaries import Suite
from k1412_ls.text.vocabulary import is_report_path

MAX_LISTED = 3


@dataclass(frozen=True)
class Problem:
    """One missing piece of evidence: ``kind: detail`` for people, ``remedy`` for the model."""

    kind: str
    detail: str
    remedy: str

    def __str__(self) -> str:
        return f"{self.kind}: {self.detail}"


@dataclass(frozen=True)
class Evidence:
    """The ledger's entries in ``seq`` order plus what the rules derive from them."""

    writes: list[WriteEntry]
    looks: list[LookEntry]
    runs: list[RunEntry]
    requirements: Requirements
    final_message: str
    skipped: tuple[str, ...] = ()  # paths written only as identical, skipped writes

    @property
    def files(self) -> dict[str, FileState]:
        return written_files(self.writes)


def names(paths: list[str] | tuple[str, ...]) -> str:
    shown = list(paths)[:MAX_LISTED]
    more = len(paths) - len(shown)
    return ", ".join(shown) + (f" and {more} more" if more > 0 else "")


def _join(cwd: str, word: str) -> str:
    word = word.removeprefix("./")
    if word.startswith("/") or cwd in (".", ""):
        return word
    return posixpath.normpath(f"{cwd}/{word}")


def touches(run: RunEntry, path: str) -> bool:
    mentions = {_join(run.cwd, m) for m in run.shape.mentions}
    subjects = {_join(run.cwd, s[5:]) for s in run.shape.subjects if s.startswith("file:")}
    return any(same_path(m, path) for m in mentions | subjects)


def reads_content(run: RunEntry) -> bool:
    """A successful command that showed what is inside files (not ``ls``/``pwd``/printed text/``> /dev/null``,
    not ``grep -c``/``-l``/``-q``, which show counts, names or nothing), and printed something: a read whose
    output is empty (``head -c 0``, ``sed -n 99p`` of a 5-line file) showed no content."""
    return run.succeeded and run.printed and run.shape.role not in ("print",) and any(
        i.role in ("probe", "run", "test", "build", "inline") and i.program not in _NO_CONTENT and not i.silenced
        and not _shows_no_lines(i) for i in run.shape.invocations)


_GREPS = frozenset({"grep", "egrep", "fgrep", "rg", "ag", "ack", "git"})


_NO_LINES = re.compile(r"^-(?:[a-zA-Z]*[clLq][a-zA-Z]*)$|^--(?:count|files-with-matches|files-without-match|quiet|silent)$")


_GIT_NO_CONTENT = frozenset({"status", "branch", "rev-parse", "remote", "config", "add", "init", "checkout",
                             "switch", "stash", "fetch", "tag", "describe", "ls-files", "reset", "restore"})


def _shows_no_lines(invocation: Invocation) -> bool:
    if invocation.program == "git":
        return git_subcommand(list(invocation.argv[1:])) in _GIT_NO_CONTENT
    return invocation.program in _GREPS and any(_NO_LINES.match(a) for a in invocation.argv[1:])


_NO_CONTENT = frozenset({"wc", "file", "find", "fd", "ls", "ll", "dir", "pwd", "cd", "tree", "which", "whereis", "type", "echo", "printf",
                         "true", ":", "date", "whoami", "id", "uname", "hostname", "env", "printenv", "sleep",
                         "export", "set", "mkdir", "touch", "du", "df", "stat", "realpath", "readlink",
                         "basename", "dirname", "nproc", "free", "locale", "test", "[", "[["})


def verified(ev: Evidence, state: FileState) -> bool:
    """Whether a successful tool event after the last change to ``state.path`` verifies it."""
    after = state.last.seq
    if state.last.by_command and not state.present:
        return True  # K1412 itself saw the file disappear
    for look in ev.looks:
        if look.seq <= after:
            continue
        if look.kind == "git" and (look.whole_tree or any(covers(p, state.path) for p in look.paths)):
            return True
        if look.kind == "read" and any(same_path(p, state.path) for p in look.paths):
            return True
        if look.kind == "inspect" and not state.present:
            return True
    for run in ev.runs:
        same_line = run.seq == after and state.last.by_command
        if run.seq < after or (run.seq == after and not same_line) or not run.succeeded:
            continue
        if other_copy(run.shape, run.cwd, state.path):
            continue  # it checked a namesake, not the changed file
        if run.source == "process" or run.proves_run or committed(run):
            return True
        if run.shape.role == "setup" and touches(run, state.path):
            return True
        if run.shape.role == "probe" and run.printed and touches(run, state.path):
            return True
    return False


def committed(run: RunEntry) -> bool:
    """The command put new, non-empty commits onto the workspace repository's HEAD (``git_commit`` fact):
    not a dry run, not an empty commit, not a commit in another repository, not a reset."""
    return run.commit is not None and run.commit.new_work


def successful_runs(ev: Evidence) -> list[RunEntry]:
    """Runs that prove an execution: a program that ran code and exited 0, or a healthy background process."""
    return [r for r in ev.runs if r.proves_run]


@dataclass(frozen=True)
class OpenFailure:
    """A failure no later success of the same work resolved."""

    run: RunEntry
    what: str  # test | build | run
    detail: str

    def describe(self) -> str:
        return self.detail


def _later(ev: Evidence, seq: int) -> list[RunEntry]:
    return [r for r in ev.runs if r.seq > seq]


def runs_every_test_file(ev: Evidence, suite: Suite) -> bool:
    """Whether ``suite`` ran every test file the workspace had when the run started (so it is the whole suite)."""
    files = ev.requirements.test_files
    return bool(files) and not suite.narrowed and not suite.collect_only and all(
        any(covers(p, f) for t in suite.targets for p in _target_paths(t)) for f in files or ())


def _target_paths(target: str) -> tuple[str, ...]:
    """The paths a runner's target can name: itself, and a dotted module's file (``unittest tests.test_calc``)."""
    path = target.split("::")[0]
    if "/" not in path and re.fullmatch(r"[A-Za-z_][\w]*(?:\.[A-Za-z_][\w]*)*", path) and not path.endswith(".py"):
        return (path, path.replace(".", "/") + ".py")
    return (path,)


def no_other_tests(ev: Evidence, suite: Suite) -> bool:
    """The workspace had no test files when the run started and the run wrote none: whatever tests a runner
    found (doctests, tests inside the module) are all there are, unless it was told to pick some by name."""
    return ev.requirements.test_files == () and not suite.narrowed and not suite.collect_only and not any(
        TEST_FILE.search(p) for p in ev.files) and not any("::" in t for t in suite.targets)


def _test_resolved(ev: Evidence, failed: TestOutcome, seq: int) -> bool:
    return any(t.outcome == "pass" and (t.suite.covers(failed.suite) or runs_every_test_file(ev, t.suite))
               for r in _later(ev, seq) for t in r.outcome.tests)


def _build_resolved(ev: Evidence, failed: BuildOutcome, run: RunEntry, seq: int) -> bool:
    for later in _later(ev, seq):
        for build in later.outcome.builds:
            if build.ok is not True:
                continue
            if failed.sources and set(failed.sources) <= set(build.sources):
                return True
            if not failed.sources and build.program == failed.program and build.argv == failed.argv:
                return True
        if not failed.sources and later.proves_run and same_work(run.shape, later.shape) \
                and any(b.ok for b in later.outcome.builds):
            return True
    return False


def unresolved_failures(ev: Evidence) -> list[OpenFailure]:
    """Failed tests, builds and programs that no later success of the same work resolved."""
    result: list[OpenFailure] = []
    for run in ev.runs:
        if run.source == "process":
            if run.failed and not any(later.seq > run.seq and later.proves_run and same_work(run.shape, later.shape)
                                      for later in ev.runs):
                result.append(OpenFailure(run, "run", f"{run.describe()} failed"))
            continue
        for test in run.outcome.tests:
            if test.outcome == "fail" and not _test_resolved(ev, test, run.seq):
                result.append(OpenFailure(run, "test", f"the tests ({test.suite.describe()}) in `{run.command}` "
                                          f"failed ({test.why})"))
        for build in run.outcome.builds:
            if build.ok is False and not _build_resolved(ev, build, run, run.seq):
                what = names(build.sources) if build.sources else " ".join(build.argv)
                result.append(OpenFailure(run, "build", f"the build of {what} in `{run.command}` failed"))
        for program in run.outcome.failed_programs:
            subjects = program.subjects or run.shape.subjects
            if not any(later.proves_run and (subjects & later.shape.subjects
                                             or " ".join(later.command.split()) == " ".join(run.command.split()))
                       for later in _later(ev, run.seq)):
                result.append(OpenFailure(run, "run", f"`{' '.join(program.argv)[:80]}` in `{run.command}` failed"))
    return result


def failure_remedy(failed: OpenFailure) -> str:
    """The one remedy for an unresolved failure (shared so the instruction never repeats it)."""
    return f"fix the cause and run `{failed.run.command}` again with run_command until it succeeds."


def looked_at(ev: Evidence, target: str) -> bool:
    """Whether the content of ``target`` was read in this run (a listing or ``pwd`` reads nothing)."""
    for look in ev.looks:
        if look.kind == "read" and any(same_path(p, target) for p in look.paths):
            return True
        if look.tool == "search_files" and any(covers(p, target) for p in look.paths):
            return True
        if look.kind == "git" and look.tool == "git_diff" and any(covers(p, target) for p in look.paths):
            return True
    return any(reads_content(run) and touches(run, target) for run in ev.runs)


def read_anything(ev: Evidence) -> bool:
    return any(look.kind == "read" or look.tool in ("search_files", "git_diff") for look in ev.looks) or any(
        reads_content(run) for run in ev.runs)


def code_files(ev: Evidence) -> dict[str, FileState]:
    """Written files that need verifying (text a tool or command wrote; binaries a build made are exempt)."""
    return {p: s for p, s in ev.files.items() if not s.last.binary}


def ran(run: RunEntry) -> bool:
    """A run whose outcome is known: it succeeded, or a test, build or program in it visibly failed."""
    o = run.outcome
    return run.proves_run or bool(o.failed_programs) or any(t.outcome in ("pass", "fail") for t in o.tests) or any(
        b.ok is not None for b in o.builds)


def attempted(ev: Evidence) -> bool:
    return any(ran(r) for r in ev.runs)


def last_code_write(ev: Evidence) -> int:
    """The event of the last change that matters: a file this run created and removed again (a backup, a
    scratch copy) left nothing to verify."""
    temporary = {p for p, s in ev.files.items() if not s.present and _first_write(ev, p) == "create"}
    seqs = [s.last.seq for p, s in ev.files.items()
            if not s.last.binary and not is_report_path(s.path) and p not in temporary]
    return max(seqs, default=0)


def _first_write(ev: Evidence, path: str) -> str:
    return next((w.action for w in ev.writes if w.path == path), "")


TEST_FILE = re.compile(r"(?:^|/)(?:test_[^/]*|[^/]*_test\.[a-z]+|[^/]*\.(?:test|spec)\.[a-z]+|tests?/[^/]+)$")


_ONLY = re.compile(r"\bonly\b|\bjust\b|\bmarked\b|\bsubset\b|\b-[km]\b|只|仅|标记", re.IGNORECASE)


def scope_ok(ev: Evidence, suite: Suite) -> bool:
    if suite.collect_only:
        return False
    if suite.whole:
        return True
    req = ev.requirements
    if suite.narrowed:
        # A subset the request asked for ("run only the tests marked slow") is the suite it wants.
        return bool(suite.selector) and _ONLY.search(req.request) is not None and all(
            word.lower() in req.request.lower() for word in re.findall(r"[A-Za-z_][A-Za-z0-9_]*", suite.selector)
            if word not in ("and", "or", "not"))
    if runs_every_test_file(ev, suite) or no_other_tests(ev, suite):
        return True
    # Test files the request names, or new tests it asked this run to write, are the scope it wants.
    allowed = [t for t in req.targets if TEST_FILE.search(t)]
    if req.needs("source") and "tests" in req.tags:
        allowed += [p for p, s in ev.files.items() if s.present and TEST_FILE.search(p)]
    # So is a directory or file the request itself names ("the tests in backend").
    words = {w.rstrip(".") for w in re.findall(r"[\w./-]+", req.request)}  # a sentence's full stop is not a name
    return all(any(same_path(t.split("::")[0], a) or covers(t, a) for a in allowed)
               or t.split("/")[0] in words or t in words for t in suite.targets)


def passing_tests_after(ev: Evidence, seq: int) -> list[TestOutcome]:
    """Passing, full-scope test runs after event ``seq``, or in the very line that made that change when the
    line ends with its test run (``sed -i … && pytest``: the change came first)."""
    return [t for r in ev.runs if r.seq > seq or (r.seq == seq and r.shape.ends_with_test)
            for t in r.outcome.tests if t.outcome == "pass" and scope_ok(ev, t.suite)]


def failure_problems(ev: Evidence, kind: str) -> list[Problem]:
    return [Problem(kind, f"{f.describe()} and no later run of the same work succeeded", failure_remedy(f))
            for f in unresolved_failures(ev)[:MAX_LISTED]]


_ADMITS_FAILURE = re.compile(r"\b(?:fail|fails|failed|failing|failure|error|errors|broken|does\s+not|doesn't|"
                             r"did\s+not|didn't|not\s+pass|cannot|can't|no\b|issues?|problems?|warnings?|violations?)"
                             r"|失败|错误|报错|不通过|未通过|没有通过|问题|无法|不能|不行|警告", re.IGNORECASE)


def failures_acknowledged(ev: Evidence) -> list[Problem]:
    """A run that only looked may end with failures, if its answer says so (they are its findings)."""
    open_failures = unresolved_failures(ev)
    if not open_failures or _ADMITS_FAILURE.search(ev.final_message):
        return []
    first = open_failures[0]
    return [Problem("execution", f"{first.describe()}, but the answer does not say so",
                    "report the failure truthfully in the answer (what failed and why).")]
