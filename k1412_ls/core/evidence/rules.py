"""The evidence rules (SPEC §9), one function per kind, each returning precise problems.

Every rule reads the ledger (ordered by ``seq``) and, where the answer itself
is the carrier, the final message. A :class:`Problem` is what ``missing``
shows ("artifact: hello.py was written but never verified afterwards …") and
the remedy the recovery instruction gives the model.

Shared definitions:

- **verification of a path P written at seq w** (``verified``): a later
  (seq > w) successful ``read_file`` of P; a later ``git_status``/``git_diff``
  that lists P (or the untracked directory holding it; a diff that does not
  list P saw no change to it); a later successful command that runs code
  or installs (a ``run``/``setup`` command exercised the workspace as
  written) or a probe command that names P (``cat P``, ``ls P``); a later
  successful background poll. A deleted path is also verified by any later
  listing or stat. A command that merely looks elsewhere (``echo ok``) does
  not verify P.
- **unresolved failure** (``unresolved_failures``): a ``run`` command (not
  a probe like ``grep``/``ls``/``python -c``, not an install) that exited
  non-zero, timed out or was cancelled, or a background process that exited
  non-zero, with no later successful run of the same command line or of a
  command sharing a subject (same script file, same ``-m`` module, same tool
  and sub-command: ``pytest tests/test_x.py`` is resolved by ``pytest``,
  ``python hello.py`` by ``python3 hello.py --flag``).
- **successful run**: exit 0 of a ``run`` command, or a background process
  polled running or exited 0. Probes prove only inspection.
"""

from __future__ import annotations

import posixpath
import re
from dataclasses import dataclass

from k1412_ls.core.evidence.claims import find_claims
from k1412_ls.core.evidence.commands import Invocation, same_work
from k1412_ls.core.evidence.ledger import (
    FileState,
    LookEntry,
    RunEntry,
    WriteEntry,
    covers,
    same_path,
    written_files,
)
from k1412_ls.core.evidence.outcomes import BuildOutcome, TestOutcome
from k1412_ls.core.evidence.requirements import Requirements
from k1412_ls.core.evidence.runners import Suite
from k1412_ls.core.numbers import extract_measurements, measurement_units
from k1412_ls.core.vocabulary import extract_targets, is_report_path, is_source_path

MAX_LISTED = 3
_CODE_BLOCK = re.compile(r"```[^\n]*\n(?:[^\n]*\n){2,}?[^\n]*```|(?:^(?: {4}|\t)\S[^\n]*\n){3,}", re.MULTILINE)


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


def _names(paths: list[str] | tuple[str, ...]) -> str:
    shown = list(paths)[:MAX_LISTED]
    more = len(paths) - len(shown)
    return ", ".join(shown) + (f" and {more} more" if more > 0 else "")


def _join(cwd: str, word: str) -> str:
    word = word.removeprefix("./")
    if word.startswith("/") or cwd in (".", ""):
        return word
    return posixpath.normpath(f"{cwd}/{word}")


def _touches(run: RunEntry, path: str) -> bool:
    mentions = {_join(run.cwd, m) for m in run.shape.mentions}
    subjects = {_join(run.cwd, s[5:]) for s in run.shape.subjects if s.startswith("file:")}
    return any(same_path(m, path) for m in mentions | subjects)


def _reads_content(run: RunEntry) -> bool:
    """A successful command that showed what is inside files (not ``ls``/``pwd``/printed text/``> /dev/null``,
    not ``grep -c``/``-l``/``-q``, which show counts, names or nothing)."""
    return run.succeeded and run.shape.role not in ("print",) and any(
        i.role in ("probe", "run", "test", "build", "inline") and i.program not in _NO_CONTENT and not i.silenced
        and not _shows_no_lines(i) for i in run.shape.invocations)


_GREPS = frozenset({"grep", "egrep", "fgrep", "rg", "ag", "ack", "git"})
_NO_LINES = re.compile(r"^-(?:[a-zA-Z]*[clLq][a-zA-Z]*)$|^--(?:count|files-with-matches|files-without-match|quiet|silent)$")


def _shows_no_lines(invocation: Invocation) -> bool:
    return invocation.program in _GREPS and any(_NO_LINES.match(a) for a in invocation.argv[1:])


_NO_CONTENT = frozenset({"wc", "file", "find", "fd", "git", "ls", "ll", "dir", "pwd", "cd", "tree", "which", "whereis", "type", "echo", "printf",
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
        if run.source == "process" or run.proves_run or run.outcome.committed:
            return True
        if run.shape.role in ("probe", "setup") and _touches(run, state.path):
            return True
    return False


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
        any(covers(t.split("::")[0], f) for t in suite.targets) for f in files or ())


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
                what = _names(build.sources) if build.sources else " ".join(build.argv)
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


def _looked_at(ev: Evidence, target: str) -> bool:
    """Whether the content of ``target`` was read in this run (a listing or ``pwd`` reads nothing)."""
    for look in ev.looks:
        if look.kind == "read" and any(same_path(p, target) for p in look.paths):
            return True
        if look.tool == "search_files" and any(covers(p, target) for p in look.paths):
            return True
        if look.kind == "git" and look.tool == "git_diff" and any(covers(p, target) for p in look.paths):
            return True
    return any(_reads_content(run) and _touches(run, target) for run in ev.runs)


def _read_anything(ev: Evidence) -> bool:
    return any(look.kind == "read" or look.tool in ("search_files", "git_diff") for look in ev.looks) or any(
        _reads_content(run) and (run.shape.mentions or run.proves_run) for run in ev.runs)


def _code_files(ev: Evidence) -> dict[str, FileState]:
    """Written files that need verifying (text a tool or command wrote; binaries a build made are exempt)."""
    return {p: s for p, s in ev.files.items() if not s.last.binary}


_ALREADY = re.compile(
    r"\balready\s+(?:has|have|had|contains?|is|was|are|says|reads|set|present|there|correct|right|returns|uses|"
    r"does|includes?|lists?|up\s+to\s+date|in\s+place|fixed)\b|\bno\s+changes?\s+(?:was\s+|were\s+)?(?:needed|"
    r"necessary|required)\b|\bnothing\s+(?:to\s+change|needed\s+changing)\b|\bleft\s+(?:it|the\s+file)\s+unchanged\b"
    r"|已经是|已是|已经有|已有|已经包含|已包含|本来就|原本就|原来就|无需修改|不需要修改|无需改动|不需要改动|无需更改|保持原样",
    re.IGNORECASE)


def _acknowledges_unchanged(text: str) -> bool:
    """Whether the answer says the file already was as requested (not "I have already done it")."""
    return bool(_ALREADY.search(text))


_FIX = re.compile(r"\b(?:fix|bug|repair|broken|failing|crash)|修|错误|问题|失败", re.IGNORECASE)


def check_artifact(ev: Evidence) -> list[Problem]:
    """Rule ``artifact``: a named file (else some file) changed, and every change verified after it."""
    req = ev.requirements
    files = _code_files(ev)
    problems: list[Problem] = []
    wanted = req.change_targets
    deleting = req.needs("deletion") or req.renames
    changed_targets = [t for t in wanted if any(same_path(p, t) and (s.present or deleting) for p, s in files.items())]
    skipped_targets = [t for t in wanted if any(same_path(p, t) for p in ev.skipped)]
    if wanted and not changed_targets:
        if skipped_targets and _acknowledges_unchanged(ev.final_message):
            return []
        read_targets = [t for t in wanted if _looked_at(ev, t)]
        proven = not _FIX.search(req.request) or bool(passing_tests_after(ev, 0))
        if read_targets and not files and _acknowledges_unchanged(ev.final_message) and proven \
                and not unresolved_failures(ev):
            return []  # already right: it read the file, (for a fix) the tests pass, and it says so
        target = wanted[0]
        what = "deleted" if deleting else "changed"
        if skipped_targets:
            problems.append(Problem(
                "artifact", f"{_names(skipped_targets)} already had the requested content before this run "
                "(the write was skipped as unchanged), so this run changed nothing",
                "say plainly that the file already had this content, or make the change the request asks for."))
        else:
            problems.append(Problem("artifact", f"{_names(wanted)} was never {what} in this run",
                                    f"make the requested change to {target} itself (not another file), then "
                                    "verify it."))
    for target in wanted:
        state = next((s for p, s in files.items() if same_path(p, target)), None)
        if state is not None and not state.present and not deleting:
            problems.append(Problem("artifact", f"{target} was deleted after it was changed",
                                    f"restore {target} with write_file and verify it."))
    if not files:
        if ev.skipped and _acknowledges_unchanged(ev.final_message) and (not wanted or skipped_targets):
            return problems
        if ev.skipped and not problems:
            problems.append(Problem(
                "artifact", f"{_names(ev.skipped)} already had the requested content before this run "
                "(the write was skipped as unchanged), so this run wrote nothing",
                "say plainly that the file already existed with this content, or write what the request asks for "
                "with write_file."))
        elif not problems:
            problems.append(Problem("artifact", "no file was written in this run",
                                    "write the requested file with write_file, then read it back with read_file."))
        return problems
    # A report's proof is the report rule (written after the run, figures copied), not a read-back.
    reports = {s.path for s in report_files(ev)[0]} if req.needs("report") or req.needs("benchmark") else set()
    unverified = [s for s in files.values() if s.path not in reports and not verified(ev, s)]
    for state in unverified[:MAX_LISTED]:
        if state.present and is_source_path(state.path):
            remedy = f"run {state.path} (or its tests) with run_command so the output proves it works."
        elif state.present:
            remedy = f"read {state.path} back with read_file (or check it with git_diff)."
        else:
            remedy = f"confirm {state.path} is gone with list_files or git_status."
        problems.append(Problem(
            "artifact", f"{state.path} was written but never verified afterwards "
            "(read it back, run it, or git diff)", remedy))
    return problems


def check_source(ev: Evidence) -> list[Problem]:
    """Rule ``source``: a separate source file (source extension or ``#!``) exists; named ones if named."""
    req = ev.requirements
    wanted = req.source_targets
    present = [s for s in ev.files.values() if s.present and (is_source_path(s.path) or s.last.shebang)]
    if any(is_source_path(p) and (not wanted or any(same_path(p, t) for t in wanted)) for p in ev.skipped):
        return []  # the source file already holds exactly this code
    if req.needs("tests") and "source" in req.kinds and any(TEST_FILE.search(s.path) for s in present):
        return []
    sources = [s for s in present if not wanted or any(same_path(s.path, t) for t in wanted)]
    if sources:
        return []
    example = wanted[0] if wanted else "a .py file"
    remedy = f"write the code to {example} with write_file."
    if _CODE_BLOCK.search(ev.final_message):
        return [Problem("source", "the code was only pasted in the chat; put the code in a file with write_file",
                        f"put the code in a file with write_file ({example}) instead of pasting it in the chat.")]
    if wanted:
        return [Problem("source", f"{_names(wanted)} was never written as a source file", remedy)]
    return [Problem("source", "no executable source file was written; put the code in a file with write_file",
                    remedy)]


def failure_problems(ev: Evidence, kind: str) -> list[Problem]:
    return [Problem(kind, f"{f.describe()} and no later run of the same work succeeded", failure_remedy(f))
            for f in unresolved_failures(ev)[:MAX_LISTED]]


def _attempted(ev: Evidence) -> bool:
    return any(_ran(r) for r in ev.runs)


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


def check_execution(ev: Evidence) -> list[Problem]:
    """Rule ``execution``: a successful run exists (a question: any run with a known outcome)."""
    req = ev.requirements
    if req.question:
        if _attempted(ev):
            return failures_acknowledged(ev)
        return [Problem("execution", "nothing was run to answer the question",
                        "run the command that answers it with run_command and report its real output.")]
    problems = [] if req.needs("tests") or req.needs("build") else failure_problems(ev, "execution")
    runs = successful_runs(ev)
    named = [t for t in req.source_targets if t not in req.inputs] if not req.needs("tests") else []
    if runs and named and not req.needs("artifact") and not any(_touches(r, t) for r in runs for t in named):
        problems.append(Problem("execution", f"{_names(named)} was never run successfully",
                                f"run {named[0]} with run_command so its exit code and output prove it works."))
    if not runs and not problems:
        sources = list(req.source_targets) or [s.path for s in ev.files.values() if s.present
                                                 and is_source_path(s.path)]
        what = f"run {sources[0]}" if sources else "run the program or its tests"
        only_probes = any(r.succeeded for r in ev.runs)
        detail = ("only inspection or printing commands ran; nothing was executed" if only_probes
                  else "nothing was run in this run")
        problems.append(Problem("execution", detail, f"{what} with run_command so its exit code and output prove "
                                                      "it works."))
    return problems


def _last_code_write(ev: Evidence) -> int:
    seqs = [s.last.seq for s in ev.files.values() if not s.last.binary and not is_report_path(s.path)]
    return max(seqs, default=0)


def _scope_ok(ev: Evidence, suite: Suite) -> bool:
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
    if runs_every_test_file(ev, suite):
        return True
    # Test files the request names, or new tests it asked this run to write, are the scope it wants.
    allowed = [t for t in req.targets if TEST_FILE.search(t)]
    if req.needs("source") and "tests" in req.tags:
        allowed += [p for p, s in ev.files.items() if s.present and TEST_FILE.search(p)]
    # So is a directory or file the request itself names ("the tests in backend").
    words = set(re.findall(r"[\w./-]+", req.request))
    return all(any(same_path(t.split("::")[0], a) or covers(t, a) for a in allowed)
               or t.split("/")[0] in words or t in words for t in suite.targets)


_ONLY = re.compile(r"\bonly\b|\bjust\b|\bmarked\b|\bsubset\b|\b-[km]\b|只|仅|标记", re.IGNORECASE)


def passing_tests_after(ev: Evidence, seq: int) -> list[TestOutcome]:
    return [t for r in ev.runs if r.seq > seq for t in r.outcome.tests if t.outcome == "pass" and _scope_ok(ev, t.suite)]


def check_tests(ev: Evidence) -> list[Problem]:
    """Rule ``tests``: the whole suite (or the subset asked for) passed after the last change; none left failing."""
    req = ev.requirements
    if req.question:
        # A question may be answered by a run that passed, failed, or only listed the tests ("how many?").
        ran = [t for r in ev.runs for t in r.outcome.tests if t.outcome in ("pass", "fail", "none")]
        if ran:
            return [] if req.needs("execution") else failures_acknowledged(ev)
        unknown = [t for r in ev.runs for t in r.outcome.tests if t.outcome == "unknown"]
        if unknown:
            return [Problem("tests", f"no test run has a known result ({unknown[-1].why})",
                            "run the test suite with run_command so its summary and exit status show the result.")]
        return [Problem("tests", "the test suite was never run in full",
                        "run the whole test suite with run_command (no -k, no file subset) and report its result.")]
    problems = [*failure_problems(ev, "tests"), *untested_inputs(ev)]
    if passing_tests_after(ev, _last_code_write(ev)):
        return problems
    narrowed = [t for r in ev.runs for t in r.outcome.tests if t.outcome == "pass" and not _scope_ok(ev, t.suite)]
    unknown = [t for r in ev.runs for t in r.outcome.tests if t.outcome in ("unknown", "none")]
    if not problems:
        if narrowed:
            detail = f"only a narrowed run passed ({narrowed[-1].suite.describe()}), not the whole suite"
        elif unknown:
            detail = f"no test run proved passing tests ({unknown[-1].why})"
        else:
            detail = "the tests were never run after the last change"
        problems.append(Problem("tests", detail, "run the whole test suite with run_command (plain `python3 -m "
                                                 "pytest -q` or the project's runner, nothing masking its exit "
                                                 "status) and make it pass."))
    return problems


def check_build(ev: Evidence) -> list[Problem]:
    """Rule ``build``: the named sources (or the project) compiled after their last change."""
    req = ev.requirements
    named = [t for t in req.targets if re.search(r"\.(?:c|cc|cpp|cxx|rs|go|java|ts)$", t)]
    builds = [(r.seq, b) for r in ev.runs for b in r.outcome.builds]
    relevant = [(seq, b) for seq, b in builds if not named or any(
        same_path(s, n) or s.endswith("/" + n) for s in b.sources for n in named) or (not b.sources and b.program in
                                                                                     ("make", "cmake", "cargo", "go"))]
    if req.question:
        if any(b.ok is not None for _, b in relevant):
            return [] if req.needs("execution") else failures_acknowledged(ev)
        return [Problem("build", f"{_names(named) if named else 'the code'} was never compiled",
                        f"compile {named[0] if named else 'it'} with run_command and report the compiler's output.")]
    problems = failure_problems(ev, "build") if not req.needs("tests") else []
    after = _last_code_write(ev)
    if not any(b.ok and seq > after for seq, b in relevant) and not problems:
        problems.append(Problem("build", f"{_names(named) if named else 'the code'} was not compiled successfully "
                                "after the last change",
                                f"compile {named[0] if named else 'it'} with run_command until it succeeds."))
    return problems


def check_commit(ev: Evidence) -> list[Problem]:
    """Rule ``commit``: a ``git commit`` exited 0 in this run."""
    if any(r.outcome.committed for r in ev.runs):
        return []
    return [Problem("commit", "no git commit succeeded in this run",
                    "commit with run_command (`git add -A && git commit -m '…'`) and check it with git log.")]


def check_deletion(ev: Evidence) -> list[Problem]:
    """Rule ``deletion``: the named files (else some file) are gone at the end of the run."""
    targets = ev.requirements.change_targets
    gone = [p for p, s in ev.files.items() if not s.present]
    if targets:
        missing = [t for t in targets if not any(same_path(g, t) for g in gone)]
    else:
        missing = [] if gone else ["the file"]
    if not missing:
        return []
    return [Problem("deletion", f"{_names(missing)} was not deleted in this run",
                    f"delete {missing[0]} (rm with run_command, or apply_patch) and confirm with list_files.")]


def report_files(ev: Evidence) -> tuple[list[FileState], bool]:
    """Written files that can be the report, and whether the request named them."""
    req = ev.requirements
    named = req.destinations or req.report_targets or tuple(
        t for t in req.targets if not is_source_path(t) and t not in req.inputs)
    present = [s for s in ev.files.values() if s.present]
    if named:
        return [s for s in present if any(same_path(s.path, t) for t in named)], True
    return [s for s in present if is_report_path(s.path) and not s.last.binary], False


def _ran(run: RunEntry) -> bool:
    """A run whose outcome is known: it succeeded, or a test, build or program in it visibly failed."""
    o = run.outcome
    return run.proves_run or bool(o.failed_programs) or any(t.outcome in ("pass", "fail") for t in o.tests) or any(
        b.ok is not None for b in o.builds)


def _first_run_seq(ev: Evidence) -> int | None:
    """The first run a report can describe: a success, or (reporting findings) any run with a known outcome."""
    runs = [r for r in ev.runs if _ran(r)] if ev.requirements.question else successful_runs(ev)
    return runs[0].seq if runs else None


def reports_after_run(ev: Evidence) -> list[FileState]:
    """Report files whose final content was written after a successful run."""
    first = _first_run_seq(ev)
    files, _ = report_files(ev)
    return [] if first is None else [s for s in files if s.last.seq > first or (s.last.by_command
                                                                               and s.last.seq >= first)]


def check_report(ev: Evidence) -> list[Problem]:
    """Rule ``report``: a report file's final content was written after a successful run; a file the request
    sends results to states only figures that commands printed."""
    carriers = reports_after_run(ev)
    if carriers:
        problems: list[Problem] = []
        if not ev.requirements.needs("benchmark"):
            for state in carriers:
                if state.path not in ev.requirements.destinations:
                    continue
                unproven = _unproven_results(ev, state)
                if unproven:
                    problems.append(Problem(
                        "report", f"{state.path} states {_names(unproven)}, which no successful command printed",
                        f"copy the exact figures printed by run_command into {state.path}."))
        return problems
    files, named = report_files(ev)
    req = ev.requirements
    target = (req.destinations or req.report_targets or req.targets or ("report.md",))[0]
    if files:
        detail = f"{_names([s.path for s in files])} was written before any successful command ran"
        remedy = f"run the work with run_command first, then rewrite {files[0].path} from its output."
    elif named:
        detail = f"{target} was never written"
        remedy = f"run the work with run_command, then write {target} from its output with write_file."
    else:
        detail = "no report file was written"
        remedy = "run the work with run_command, then write the report to a file (e.g. report.md) with write_file."
    return [Problem("report", detail, remedy)]


Pool = dict[str, set[str]]


def _measured(ev: Evidence, before: int | None) -> Pool:
    """Numbers printed by commands that really ran before ``before``, with the units printed after them
    ("" when a number was printed bare)."""
    pool: Pool = {}
    for run in ev.runs:
        if run.shape.role == "print" or run.shape.faked_summary:
            continue
        if not (run.proves_run or (run.source == "exec" and run.succeeded and run.shape.role == "run")):
            continue
        if before is not None and run.seq >= before:
            continue
        _add(pool, run.numbers, dict(run.units))
    return pool


def _add(pool: Pool, numbers: tuple[str, ...] | frozenset[str], units: dict[str, tuple[str, ...]]) -> None:
    for number in numbers:
        pool.setdefault(number, set()).update(units.get(number) or ("",))


def _unproven(pool: Pool, figures: list[str] | tuple[str, ...], units: dict[str, tuple[str, ...]]) -> list[str]:
    """Figures not printed verbatim, or printed with another unit (``0.213 ms`` is not ``0.213 s``)."""
    missing: list[str] = []
    for figure in figures:
        seen = pool.get(figure)
        stated = units.get(figure) or ()
        if seen is None or (stated and "" not in seen and not set(stated) & seen):
            missing.append(figure + (f" {stated[0]}" if stated and seen is not None else ""))
    return missing


def _counts(state: FileState) -> list[str]:
    """Plain numbers of three or more digits a results file states (counts, totals), years aside."""
    return [n for n in state.last.numbers if n.isdigit() and len(n) >= 3 and not 1900 <= int(n) <= 2100
            and n not in state.last.measurements]


def _known_numbers(ev: Evidence, before: int) -> Pool:
    """Where a count in a results file may come from besides output: files read, code written, the request."""
    pool = _measured(ev, before)
    for look in ev.looks:
        _add(pool, look.numbers, {})
    for write in ev.writes:
        if write.tool != "run_command" and write.seq < before and is_source_path(write.path):
            _add(pool, write.numbers, {})
    _add(pool, tuple(re.findall(r"\d+", ev.requirements.request)), {})
    return pool


def _unproven_results(ev: Evidence, state: FileState) -> list[str]:
    """Figures of a results file that nothing printed: measurements must come from command output (with
    their units); counts may also come from what the run read or wrote as code."""
    before = state.last.seq + (1 if state.last.by_command else 0)
    missing = _unproven(_measured(ev, before), state.last.measurements, dict(state.last.units))
    if state.path in ev.requirements.destinations:
        missing += _unproven(_known_numbers(ev, before), _counts(state), {})
    return missing


def check_benchmark(ev: Evidence) -> list[Problem]:
    """Rule ``benchmark``: every measurement in the report (or the answer) appears in earlier command output.

    The carriers are the files the request sends results to (else, when a
    report is required, the report files), else the final message. A
    measurement is a number with a decimal point or a unit
    (``core.numbers.is_measurement``); it must equal, token for token, a
    number printed by a successful run before the carrier was written. At
    least one measurement must be present.
    """
    remedy_tail = "copy the exact figures printed by run_command"
    req = ev.requirements
    if req.needs("report") or req.destinations:
        carriers = reports_after_run(ev)
        files, _ = report_files(ev)
        if not carriers:
            what = f"{files[0].path} was written before any successful run" if files else \
                "no report written after a successful run holds the measurements"
            return [Problem("benchmark", what,
                            f"run the benchmark with run_command, then {remedy_tail} into the report.")]
        problems: list[Problem] = []
        measured_any = False
        for state in carriers:
            measured_any = measured_any or bool(state.last.measurements)
            unproven = _unproven_results(ev, state)
            if unproven:
                problems.append(Problem(
                    "benchmark", f"{state.path} states {_names(unproven)}, which no successful command printed",
                    f"{remedy_tail} into {state.path}; rerun the benchmark if you need new figures."))
        if not measured_any and not problems:
            problems.append(Problem("benchmark", f"{carriers[0].path} contains no measured figures",
                                    f"{remedy_tail} (times, rates, sizes) into {carriers[0].path}."))
        if problems:
            return problems
    figures = extract_measurements(ev.final_message)
    pool = _measured(ev, None)
    unproven = _unproven(pool, figures, {k: tuple(v) for k, v in measurement_units(ev.final_message).items()})
    if unproven:
        return [Problem("benchmark", f"the answer states {_names(unproven)}, which no successful command printed",
                        f"{remedy_tail} into the answer, or run the measurement that produces them.")]
    if not figures and not (req.needs("report") or req.destinations):
        return [Problem("benchmark", "no measured figure from command output was reported",
                        f"run the benchmark with run_command and {remedy_tail} into the answer.")]
    return []


_SAYS_MISSING = re.compile(r"\b(?:does\s+not\s+exist|doesn't\s+exist|not\s+found|no\s+such\s+file|is\s+missing|"
                           r"there\s+is\s+no)\b|不存在|找不到|没有这个文件|没有找到", re.IGNORECASE)


def check_inspection(ev: Evidence) -> list[Problem]:
    """Rule ``inspection``: the answer rests on content read in this run (of the named files, if any)."""
    req = ev.requirements
    targets = list(req.targets)
    if targets:
        unread = [t for t in targets if not _looked_at(ev, t)]
        if len(unread) < len(targets):
            return []
        absent = [t for t in targets if t not in req.existing]
        if req.resolved and absent == targets and _SAYS_MISSING.search(ev.final_message) and (
                any(look.kind == "inspect" for look in ev.looks) or any(r.shape.role == "probe" for r in ev.runs)):
            return []  # what it asks about does not exist; the run looked and says so
        return [Problem("inspection", f"{_names(unread)} was never read in this run",
                        f"read {unread[0]} with read_file before answering.")]
    if _read_anything(ev):
        return []
    if "listing" in ev.requirements.tags and (any(look.kind == "inspect" for look in ev.looks) or any(
            r.succeeded and r.shape.role == "probe" for r in ev.runs)):
        return []  # "list the files": a listing is the answer
    return [Problem("inspection", "nothing in the workspace was read in this run (a listing shows no content)",
                    "read the relevant code with read_file or search_files before answering.")]


def _resolve_claimed(ev: Evidence, name: str, deleted: bool) -> FileState | None:
    files = ev.files
    exact = next((s for p, s in files.items() if same_path(p, name)), None)
    if exact is not None or "/" in name:
        return exact
    stem_only = name.isupper() and "." not in name  # "README" for README.md
    matches = [s for p, s in files.items() if p.rsplit("/", 1)[-1] == name
               or (stem_only and p.rsplit("/", 1)[-1].split(".")[0] == name)]
    return matches[0] if len(matches) == 1 else None


def answer_figures(ev: Evidence) -> list[Problem]:
    """Figures with a unit in the answer (times, %, ×, rates, sizes) must come from this run: printed by a
    command, read from a file, written by a tool, or given in the request."""
    units = {k: tuple(v) for k, v in measurement_units(ev.final_message).items()}
    if not units or ev.requirements.needs("benchmark"):
        return []  # a benchmark request checks its figures more strictly
    pool: Pool = {}
    for run in ev.runs:
        if run.shape.role != "print" and not run.shape.faked_summary and run.source == "exec":
            _add(pool, run.numbers, dict(run.units))
    for look in ev.looks:
        _add(pool, look.numbers, {})
    for write in ev.writes:
        if write.tool != "run_command":
            _add(pool, write.numbers, {})
    _add(pool, tuple(re.findall(r"\d+(?:\.\d+)?", ev.requirements.request)), {})
    unproven = _unproven(pool, list(units), units)
    if not unproven:
        return []
    return [Problem("claims", f"the answer states {_names(unproven)}, which nothing in this run printed or read",
                    "quote only figures that a command printed (run the measurement), or leave them out.")]


def answer_counts(ev: Evidence) -> list[Problem]:
    """A request to run something and report on it ("run bench.py and tell me the comparisons"): counts of
    three or more digits in the answer come from what the run printed, read or wrote as code."""
    req = ev.requirements
    if not (req.question and req.needs("execution")):
        return []
    numbers = [n for n in re.findall(r"(?<![\w.,])\d{3,}(?![\w.,]\d)", ev.final_message.replace(",", ""))
               if not 1900 <= int(n) <= 2100]
    if not numbers:
        return []
    unproven = _unproven(_known_numbers(ev, 1 << 60), numbers, {})
    if not unproven:
        return []
    return [Problem("claims", f"the answer states {_names(unproven)}, which nothing in this run printed",
                    "report the numbers the command printed.")]


def untested_inputs(ev: Evidence) -> list[Problem]:
    """New tests for a named module must exercise it: some written test file imports or includes it."""
    req = ev.requirements
    stems = {t.rsplit("/", 1)[-1].rsplit(".", 1)[0] for t in req.inputs if is_source_path(t)}
    tests = [s for s in ev.files.values() if s.present and TEST_FILE.search(s.path) and not s.last.binary]
    if not stems or not tests or not ("source" in req.kinds and "tests" in req.tags):
        return []
    checked = [s for s in tests if s.last.imports or s.path.endswith((".py", ".js", ".ts", ".c", ".cpp", ".mjs"))]
    if not checked or any(stems & set(s.last.imports) for s in checked):
        return []
    return [Problem("tests", f"the new tests ({_names([s.path for s in checked])}) never import "
                    f"{_names(sorted(stems))}, so they cannot test it",
                    f"write tests that import and call {sorted(stems)[0]}, then run them.")]


def check_claims(ev: Evidence) -> list[Problem]:
    """Rule ``claims``: every claim of the final answer is backed by this run's events."""
    problems: list[Problem] = [*answer_figures(ev), *answer_counts(ev)]
    seen: set[tuple[str, str | None]] = set()
    for claim in find_claims(ev.final_message):
        key = (claim.kind, claim.path)
        if key in seen:
            continue
        seen.add(key)
        if claim.kind == "tests-pass":
            failures = [f for f in unresolved_failures(ev) if f.what == "test"]
            if failures or not passing_tests_after(ev, _last_code_write(ev)):
                problems.append(Problem("claims", "the answer says the tests pass, but no full test run after the "
                                        "last change passed", "run the whole test suite with run_command and report "
                                        "its real result."))
        elif claim.kind == "compiles":
            ok = [b for r in ev.runs for b in r.outcome.builds if b.ok and (
                claim.path is None or any(s == claim.path or s.endswith("/" + claim.path) for s in b.sources))]
            open_builds = [f for f in unresolved_failures(ev) if f.what == "build"]
            if not ok or open_builds:
                problems.append(Problem("claims", "the answer says it compiles, but no compile succeeded",
                                        "compile it with run_command and report the compiler's real output."))
        elif claim.kind == "committed":
            if not any(r.outcome.committed for r in ev.runs):
                problems.append(Problem("claims", "the answer says the work was committed, but no git commit "
                                        "succeeded", "commit with run_command (git commit) or do not claim it."))
        elif claim.kind == "changed-something":
            if not any(s.present or s.last.removes for s in ev.files.values()) and not ev.skipped:
                problems.append(Problem("claims", "the answer says something was changed, but this run changed no "
                                        "file", "make the change with a tool (and verify it), or do not claim it."))
        elif claim.kind == "test-count" and claim.path:
            seen = {n for r in ev.runs for n in r.numbers if r.outcome.tests}
            if claim.path not in seen:
                problems.append(Problem("claims", f"the answer counts {claim.path} tests, but no test run printed "
                                        "that number", "report the counts the test runner printed."))
        elif claim.kind == "deleted-dir" and claim.path:
            directory = claim.path.strip("/")
            if not any(not s.present and (p == directory or p.startswith(directory + "/"))
                       for p, s in ev.files.items()):
                problems.append(Problem("claims", f"the answer says {directory}/ was removed, but this run deleted "
                                        "nothing in it", f"delete {directory} with run_command (rm -r) and confirm "
                                        "with list_files, or do not claim it."))
        elif claim.kind in ("changed", "deleted") and claim.path:
            state = _resolve_claimed(ev, claim.path, claim.kind == "deleted")
            if claim.kind == "deleted":
                ok = state is not None and not state.present
            else:
                ok = (state is not None and state.present) or any(
                    same_path(p, claim.path) or p.rsplit("/", 1)[-1] == claim.path for p in ev.skipped)
            if not ok and claim.path in extract_targets(ev.requirements.request) and claim.path in \
                    ev.requirements.inputs:
                ok = True  # "tests for calc.py" — the answer names its input, not a change
            if not ok:
                verb = "deleted" if claim.kind == "deleted" else "changed"
                problems.append(Problem("claims", f"the answer says {claim.path} was {verb}, but this run never "
                                        f"{verb} it", f"make that change to {claim.path} with a tool, or do not "
                                        "claim it."))
    return problems


TEST_FILE = re.compile(r"(?:^|/)(?:test_[^/]*|[^/]*_test\.[a-z]+|[^/]*\.(?:test|spec)\.[a-z]+|tests?/[^/]+)$")

CHECKS = {
    "artifact": check_artifact,
    "source": check_source,
    "execution": check_execution,
    "tests": check_tests,
    "build": check_build,
    "commit": check_commit,
    "deletion": check_deletion,
    "report": check_report,
    "benchmark": check_benchmark,
    "inspection": check_inspection,
    "claims": check_claims,
}
