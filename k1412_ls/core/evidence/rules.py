"""The evidence rules (policy ``agent-loop-v8``), one check per kind, each returning precise problems.

A :class:`~k1412_ls.core.evidence.proof.Problem` is what ``missing`` shows ("artifact: hello.py was
written but never verified afterwards …") and the remedy the recovery instruction gives the model.
The definitions the checks share (verification, open failures, test scope) live in ``proof.py``; the
figure checks in ``figures.py``. ``docs/evidence.md`` describes every rule.
"""

from __future__ import annotations

import re
from dataclasses import replace

from k1412_ls.core.evidence.claims import check_claims
from k1412_ls.core.evidence.figures import (
    COUNTING,
    measured,
    unproven_figures,
    unproven_results,
)
from k1412_ls.core.evidence.invocations import classify_argv
from k1412_ls.core.evidence.partial_work import partial_work
from k1412_ls.core.evidence.proof import (
    MAX_LISTED,
    TEST_FILE,
    Evidence,
    FileState,
    Problem,
    attempted,
    code_files,
    committed,
    covers,
    failure_problems,
    failures_acknowledged,
    last_code_write,
    looked_at,
    names,
    passing_tests_after,
    ran,
    read_anything,
    same_path,
    scope_ok,
    successful_runs,
    touches,
    unresolved_failures,
    verified,
)
from k1412_ls.core.evidence.quoted_facts import unseen_quotes
from k1412_ls.core.evidence.requested_commands import requested_commands, runs_like, runs_requested
from k1412_ls.core.evidence.requirements import without_prohibitions
from k1412_ls.text.numbers import extract_measurements, measurement_units
from k1412_ls.text.runner_summaries import Suite
from k1412_ls.text.vocabulary import is_report_path, is_source_path

_CODE_BLOCK = re.compile(r"```[^\n]*\n(?:[^\n]*\n){2,}?[^\n]*```|(?:^(?: {4}|\t)\S[^\n]*\n){3,}", re.MULTILINE)


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
    files = code_files(ev)
    problems: list[Problem] = []
    wanted = req.change_targets
    deleting = req.needs("deletion") or req.renames
    changed_targets = [t for t in wanted if any(same_path(p, t) and (s.present or deleting) for p, s in files.items())]
    skipped_targets = [t for t in wanted if any(same_path(p, t) for p in ev.skipped)]
    if wanted and not changed_targets:
        if skipped_targets and _acknowledges_unchanged(ev.final_message):
            return []
        read_targets = [t for t in wanted if looked_at(ev, t)]
        proven = not _FIX.search(req.request) or bool(passing_tests_after(ev, 0))
        if read_targets and not files and _acknowledges_unchanged(ev.final_message) and proven \
                and not unresolved_failures(ev):
            return []  # already right: it read the file, (for a fix) the tests pass, and it says so
        target = wanted[0]
        what = "deleted" if deleting else "changed"
        if skipped_targets:
            problems.append(Problem(
                "artifact", f"{names(skipped_targets)} already had the requested content before this run "
                "(the write was skipped as unchanged), so this run changed nothing",
                "say plainly that the file already had this content, or make the change the request asks for."))
        else:
            problems.append(Problem("artifact", f"{names(wanted)} was never {what} in this run",
                                    f"make the requested change to {target} itself (not another file), then "
                                    "verify it."))
    problems += partial_work(ev, files, wanted, changed_targets, deleting)
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
                "artifact", f"{names(ev.skipped)} already had the requested content before this run "
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
        return [Problem("source", f"{names(wanted)} was never written as a source file", remedy)]
    return [Problem("source", "no executable source file was written; put the code in a file with write_file",
                    remedy)]


def check_execution(ev: Evidence) -> list[Problem]:
    """Rule ``execution``: a successful run exists (a question: any run with a known outcome)."""
    req = ev.requirements
    if req.question:
        if attempted(ev):
            return failures_acknowledged(ev)
        return [Problem("execution", "nothing was run to answer the question",
                        "run the command that answers it with run_command and report its real output.")]
    problems = [] if req.needs("tests") or req.needs("build") else failure_problems(ev, "execution")
    runs = successful_runs(ev)
    after = last_code_write(ev)
    for asked in requested_commands(without_prohibitions(req.request)):
        if not any(r.seq >= after and r.proves_run and runs_like(r.shape.invocations, asked) for r in runs) and not (
                classify_argv(list(asked)).role == "test" and passing_tests_after(ev, after)):
            problems.append(Problem("execution", f"the request asks for `{' '.join(asked)}`, which never ran "
                                    "successfully after the last change",
                                    f"run `{' '.join(asked)}` with run_command and report what it printed."))
    named = [t for t in req.source_targets if t not in req.inputs] if not req.needs("tests") else []
    if runs and named and not req.needs("artifact") and not any(touches(r, t) for r in runs for t in named):
        problems.append(Problem("execution", f"{names(named)} was never run successfully",
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


def check_tests(ev: Evidence) -> list[Problem]:
    """Rule ``tests``: the whole suite (or the subset asked for) passed after the last change; none left failing."""
    req = ev.requirements
    if req.question:
        # A question may be answered by a run that passed, failed, or only listed the tests ("how many?");
        # a pass or a listing answers it only for the suite it asks about (a failure is a finding anyway).
        ran = [t for r in ev.runs for t in r.outcome.tests if t.outcome == "fail" or (
            t.outcome in ("pass", "none") and scope_ok(ev, _as_listed(t.suite)))]
        if ran:
            return [] if req.needs("execution") else failures_acknowledged(ev)
        narrowed = [t for r in ev.runs for t in r.outcome.tests if t.outcome in ("pass", "none")]
        unknown = [t for r in ev.runs for t in r.outcome.tests if t.outcome == "unknown"]
        if narrowed:
            return [Problem("tests", f"only a narrowed run ran ({narrowed[-1].suite.describe()}), not the suite "
                            "the request asks about", "run the whole test suite with run_command (no -k, no file "
                            "subset, nothing changing its selection) and report its result.")]
        if unknown:
            return [Problem("tests", f"no test run has a known result ({unknown[-1].why})",
                            "run the test suite with run_command so its summary and exit status show the result.")]
        return [Problem("tests", "the test suite was never run in full",
                        "run the whole test suite with run_command (no -k, no file subset) and report its result.")]
    problems = [*failure_problems(ev, "tests"), *untested_inputs(ev)]
    if passing_tests_after(ev, last_code_write(ev)):
        return problems
    narrowed = [t for r in ev.runs for t in r.outcome.tests if t.outcome == "pass" and not scope_ok(ev, t.suite)]
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


def _as_listed(suite: Suite) -> Suite:
    """A listing (``--collect-only``) judged by the scope it lists, for counting questions."""
    if not suite.collect_only:
        return suite
    listing_only = suite.narrowed is None or (not suite.selector and suite.narrowed.endswith(
        ("only collects tests", "runs no test")))
    return replace(suite, collect_only=False, narrowed=None if listing_only else suite.narrowed)


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
        return [Problem("build", f"{names(named) if named else 'the code'} was never compiled",
                        f"compile {named[0] if named else 'it'} with run_command and report the compiler's output.")]
    problems = failure_problems(ev, "build") if not req.needs("tests") else []
    after = last_code_write(ev)
    asked = requested_commands(req.request)
    if asked and any(r.seq >= after and r.proves_run and runs_requested(r.shape.invocations, asked) for r in ev.runs):
        return problems  # the build command the request names ran after the last change, and succeeded
    if not any(b.ok and seq > after for seq, b in relevant) and not problems:
        problems.append(Problem("build", f"{names(named) if named else 'the code'} was not compiled successfully "
                                "after the last change",
                                f"compile {named[0] if named else 'it'} with run_command until it succeeds."))
    return problems


def check_commit(ev: Evidence) -> list[Problem]:
    """Rule ``commit``: new, non-empty commits reached the workspace repository's HEAD in this run, holding
    the files the request names; for "commit all my changes", nothing stayed uncommitted."""
    commits = [r for r in ev.runs if committed(r)]
    if not commits:
        tried = any(r.outcome.committed for r in ev.runs)
        detail = ("git commit exited 0 but no new commit with changes reached the workspace's repository "
                  "(an empty commit, a dry run, or a commit in another repository)") if tried else \
            "no git commit succeeded in this run"
        return [Problem("commit", detail,
                        "commit with run_command (`git add -A && git commit -m '…'`) and check it with git log.")]
    held = {f for r in commits if r.commit and r.commit.files for f in r.commit.files}
    named = [t for t in ev.requirements.change_targets if t in ev.requirements.existing or t in ev.files]
    unknown = any(r.commit and r.commit.files is None for r in commits)
    left = [t for t in named if not any(covers(t, f) or same_path(t, f) for f in held)]
    if left and not unknown:
        return [Problem("commit", f"the commits of this run do not hold {names(left)}",
                        f"add {names(left)} to a commit (`git add {left[0]} && git commit`) and check it with git log.")]
    if ev.requirements.commit_all:
        last = commits[-1].commit
        if last is not None and last.dirty_after != 0:
            count = "some" if last.dirty_after is None else str(last.dirty_after)
            return [Problem("commit", f"the request asked to commit all changes, but {count} path(s) stayed "
                            "uncommitted after the last commit",
                            "commit the remaining changes (`git add -A && git commit`) and check with git status.")]
    return []


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
    return [Problem("deletion", f"{names(missing)} was not deleted in this run",
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


def _first_run_seq(ev: Evidence) -> int | None:
    """The first run a report can describe: a success, or (reporting findings) any run with a known outcome."""
    runs = [r for r in ev.runs if ran(r)] if ev.requirements.question else successful_runs(ev)
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
                unproven = unproven_results(ev, state)
                if unproven:
                    problems.append(Problem(
                        "report", f"{state.path} states {names(unproven)}, which no successful command printed",
                        f"copy the exact figures printed by run_command into {state.path}."))
        return problems
    files, named = report_files(ev)
    req = ev.requirements
    target = (req.destinations or req.report_targets or req.targets or ("report.md",))[0]
    if files:
        detail = f"{names([s.path for s in files])} was written before any successful command ran"
        remedy = f"run the work with run_command first, then rewrite {files[0].path} from its output."
    elif named:
        detail = f"{target} was never written"
        remedy = f"run the work with run_command, then write {target} from its output with write_file."
    else:
        detail = "no report file was written"
        remedy = "run the work with run_command, then write the report to a file (e.g. report.md) with write_file."
    return [Problem("report", detail, remedy)]


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
            unproven = unproven_results(ev, state)
            if unproven:
                problems.append(Problem(
                    "benchmark", f"{state.path} states {names(unproven)}, which no successful command printed",
                    f"{remedy_tail} into {state.path}; rerun the benchmark if you need new figures."))
        if not measured_any and not problems:
            problems.append(Problem("benchmark", f"{carriers[0].path} contains no measured figures",
                                    f"{remedy_tail} (times, rates, sizes) into {carriers[0].path}."))
        if problems:
            return problems
    figures = extract_measurements(ev.final_message)
    pool = measured(ev, None)
    unproven = unproven_figures(pool, figures, {k: tuple(v) for k, v in measurement_units(ev.final_message).items()})
    if unproven:
        return [Problem("benchmark", f"the answer states {names(unproven)}, which no successful command printed",
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
    unseen = unseen_quotes(ev.final_message, req.request, ev.runs, ev.looks) if ev.runs else []
    if unseen:
        return [Problem("inspection", f"the answer quotes {names(unseen)}, which no command of this run printed",
                        "answer with what the commands really printed, or run the command that shows it.")]
    targets = list(req.targets)
    if targets:
        unread = [t for t in targets if not looked_at(ev, t)]
        if len(unread) < len(targets):
            return []
        if COUNTING.search(req.request) and any(r.succeeded and r.shape.role == "probe" and any(
                touches(r, t) or covers(t, m) for t in targets for m in r.shape.mentions) for r in ev.runs):
            return []  # a count of what it names (wc -l, grep -c, ls | wc) answers "how many"
        absent = [t for t in targets if t not in req.existing]
        if req.resolved and absent == targets and _SAYS_MISSING.search(ev.final_message) and (
                any(look.kind == "inspect" for look in ev.looks) or any(r.shape.role == "probe" for r in ev.runs)):
            return []  # what it asks about does not exist; the run looked and says so
        return [Problem("inspection", f"{names(unread)} was never read in this run",
                        f"read {unread[0]} with read_file before answering.")]
    if read_anything(ev):
        return []
    listed = any(look.kind == "inspect" for look in ev.looks) or any(
        r.succeeded and r.shape.role == "probe" and not r.shape.faked_summary for r in ev.runs)
    if listed and ("listing" in req.tags or COUNTING.search(req.request)):
        return []  # "list the files", "how many lines?": a listing or a count is the answer
    return [Problem("inspection", "nothing in the workspace was read in this run (a listing shows no content)",
                    "read the relevant code with read_file or search_files before answering.")]


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
    return [Problem("tests", f"the new tests ({names([s.path for s in checked])}) never import "
                    f"{names(sorted(stems))}, so they cannot test it",
                    f"write tests that import and call {sorted(stems)[0]}, then run them.")]


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
