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

import re
from dataclasses import dataclass

from k1412_ls.core.evidence.commands import same_work
from k1412_ls.core.evidence.ledger import (
    FileState,
    LookEntry,
    RunEntry,
    WriteEntry,
    covers,
    same_path,
    written_files,
)
from k1412_ls.core.evidence.requirements import Requirements
from k1412_ls.core.numbers import extract_measurements
from k1412_ls.core.vocabulary import is_report_path, is_source_path

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


def _touches(run: RunEntry, path: str) -> bool:
    return any(same_path(m, path) for m in run.shape.mentions) or any(
        s.startswith("file:") and same_path(s[5:], path) for s in run.shape.subjects)


def verified(ev: Evidence, state: FileState) -> bool:
    """Whether a successful tool event after the last change to ``state.path`` verifies it."""
    after = state.last.seq
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
        if run.seq <= after or not run.succeeded:
            continue
        if run.source == "process" or run.shape.role in ("run", "setup") or _touches(run, state.path):
            return True
    return False


def successful_runs(ev: Evidence) -> list[RunEntry]:
    """Runs that prove an execution: a ``run`` command exiting 0 or a healthy background process."""
    return [r for r in ev.runs if r.succeeded and (r.source == "process" or r.shape.is_run)]


def unresolved_failures(ev: Evidence) -> list[RunEntry]:
    """Failed executions that no later successful run of the same work resolved."""
    result: list[RunEntry] = []
    for failed in ev.runs:
        if not failed.failed or (failed.source == "exec" and not failed.shape.is_run):
            continue
        if not any(later.seq > failed.seq and later.succeeded and same_work(failed.shape, later.shape)
                   for later in ev.runs):
            result.append(failed)
    return result


def failure_remedy(failed: RunEntry) -> str:
    """The one remedy for an unresolved failure (shared so the instruction never repeats it)."""
    return f"fix the cause and run `{failed.command}` again with run_command until it exits 0."


def _looked_at(ev: Evidence, target: str) -> bool:
    """A named file the run only used as input: read, listed, searched or named by a command."""
    return any(any(same_path(p, target) for p in look.paths) for look in ev.looks) or any(
        run.succeeded and _touches(run, target) for run in ev.runs)


def check_artifact(ev: Evidence) -> list[Problem]:
    """Rule ``artifact``: every file written is verified after its last change; named targets are written."""
    files = ev.files
    problems: list[Problem] = []
    for target in ev.requirements.targets:
        if not any(same_path(path, target) for path in files) and not _looked_at(ev, target):
            problems.append(Problem("artifact", f"{target} was never written",
                                    f"create {target} with write_file, then read it back with read_file."))
    if not files:
        if ev.skipped:
            problems.append(Problem(
                "artifact", f"{_names(ev.skipped)} already had the requested content before this run "
                "(the write was skipped as unchanged), so this run wrote nothing",
                "say plainly that the file already existed with this content, or write what the request asks for "
                "with write_file."))
        elif not problems:
            problems.append(Problem("artifact", "no file was written in this run",
                                    "write the requested file with write_file, then read it back with read_file."))
        return problems
    failures = unresolved_failures(ev)
    crashed: dict[str, RunEntry] = {}
    for failed in failures:
        for state in files.values():
            if state.present and _touches(failed, state.path):
                crashed.setdefault(state.path, failed)
    for path, failed in list(crashed.items())[:MAX_LISTED]:
        problems.append(Problem("artifact", f"{path} failed when run: {failed.describe()} and no later run "
                                "succeeded", failure_remedy(failed)))
    unverified = [s for s in files.values() if s.path not in crashed and not verified(ev, s)]
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
    wanted = ev.requirements.source_targets
    sources = [s for s in ev.files.values()
               if s.present and (is_source_path(s.path) or s.last.shebang)
               and (not wanted or any(same_path(s.path, t) for t in wanted))]
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


def check_execution(ev: Evidence) -> list[Problem]:
    """Rule ``execution``: a successful run exists and no run failure is left unresolved."""
    problems = [Problem("execution", f"{f.describe()} failed and no later run of it succeeded", failure_remedy(f))
                for f in unresolved_failures(ev)[:MAX_LISTED]]
    if not successful_runs(ev) and not problems:
        sources = [t for t in ev.requirements.source_targets] or [
            s.path for s in ev.files.values() if s.present and is_source_path(s.path)]
        what = f"run {sources[0]}" if sources else "run the program or its tests"
        only_probes = any(r.succeeded for r in ev.runs)
        detail = ("only inspection commands ran; nothing was executed" if only_probes
                  else "nothing was run in this run")
        problems.append(Problem("execution", detail, f"{what} with run_command so its exit code and output prove "
                                                      "it works."))
    return problems


def report_files(ev: Evidence) -> tuple[list[FileState], bool]:
    """Written files that can be the report, and whether the request named them."""
    req = ev.requirements
    named = req.report_targets or tuple(t for t in req.targets if not is_source_path(t))
    present = [s for s in ev.files.values() if s.present]
    if named:
        return [s for s in present if any(same_path(s.path, t) for t in named)], True
    return [s for s in present if is_report_path(s.path)], False


def _first_run_seq(ev: Evidence) -> int | None:
    runs = successful_runs(ev)
    return runs[0].seq if runs else None


def reports_after_run(ev: Evidence) -> list[FileState]:
    """Report files whose final content was written after a successful run."""
    first = _first_run_seq(ev)
    files, _ = report_files(ev)
    return [] if first is None else [s for s in files if s.last.seq > first]


def check_report(ev: Evidence) -> list[Problem]:
    """Rule ``report``: a report file's final content was written after a successful run."""
    if reports_after_run(ev):
        return []
    files, named = report_files(ev)
    req = ev.requirements
    target = (req.report_targets or req.targets or ("report.md",))[0]
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


def _measured_numbers(ev: Evidence, before: int | None) -> set[str]:
    pool: set[str] = set()
    for run in successful_runs(ev):
        if before is None or run.seq < before:
            pool |= run.numbers
    return pool


def check_benchmark(ev: Evidence) -> list[Problem]:
    """Rule ``benchmark``: every measurement in the report (or the answer) appears in earlier command output.

    The carrier is the report file when a report is required, else the final
    message. A measurement is a number with a decimal point or a unit
    (``core.numbers.is_measurement``); it must equal, token for token, a
    number printed by a successful run before the report was written. At
    least one measurement must be present.
    """
    remedy_tail = "copy the exact figures printed by run_command"
    if ev.requirements.needs("report"):
        carriers = reports_after_run(ev)
        if not carriers:
            return [Problem("benchmark", "no report written after a successful run holds the measurements",
                            f"run the benchmark with run_command, then {remedy_tail} into the report.")]
        problems: list[Problem] = []
        measured_any = False
        for state in carriers:
            pool = _measured_numbers(ev, state.last.seq)
            figures = list(state.last.measurements)
            measured_any = measured_any or bool(figures)
            unproven = [n for n in figures if n not in pool]
            if unproven:
                problems.append(Problem(
                    "benchmark", f"{state.path} states {_names(unproven)}, which no successful command printed",
                    f"{remedy_tail} into {state.path}; rerun the benchmark if you need new figures."))
        if not measured_any and not problems:
            problems.append(Problem("benchmark", f"{carriers[0].path} contains no measured figures",
                                    f"{remedy_tail} (times, rates, sizes) into {carriers[0].path}."))
        return problems
    figures = extract_measurements(ev.final_message)
    pool = _measured_numbers(ev, None)
    unproven = [n for n in figures if n not in pool]
    if unproven:
        return [Problem("benchmark", f"the answer states {_names(unproven)}, which no successful command printed",
                        f"{remedy_tail} into the answer, or run the measurement that produces them.")]
    if not figures:
        return [Problem("benchmark", "no measured figure from command output was reported",
                        f"run the benchmark with run_command and {remedy_tail} into the answer.")]
    return []


def check_inspection(ev: Evidence) -> list[Problem]:
    """Rule ``inspection``: the answer rests on something read, listed, searched or run in this run."""
    if ev.looks or any(r.succeeded for r in ev.runs):
        return []
    return [Problem("inspection", "nothing in the workspace was read in this run",
                    "read the relevant code with read_file or search_files before answering.")]


CHECKS = {
    "artifact": check_artifact,
    "source": check_source,
    "execution": check_execution,
    "report": check_report,
    "benchmark": check_benchmark,
    "inspection": check_inspection,
}
