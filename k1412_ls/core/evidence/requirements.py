"""What proof a request owes (policy ``agent-loop-v4``), derived from the shared vocabulary.

Derivation rules, by name (each appears in ``Requirements.rules``); they fail
closed, so an unfamiliar phrasing owes more, never less:

- ``need.artifact``: any verb that acts on the workspace (English or
  Chinese, ``change``/``artifact`` tags) → a change, verified after it;
- ``need.source``: write a script/function/program/tests → a source file;
- ``need.execution``: run, start, lint, benchmark … → a successful run
  (for a question, any run whose outcome is known);
- ``need.tests``: the request is about tests → a full-suite test run that
  passes after the last change (for a question: that ran, pass or fail);
- ``need.build``: compile/build → the named sources compile (for a
  question: a compile ran);
- ``need.commit``: commit → a ``git commit`` that succeeded;
- ``need.deletion``: delete/remove a named file → it is gone at the end;
- ``need.report`` / ``need.benchmark``: a report written after the run it
  describes, every figure in it printed by a successful command;
- ``need.inspection``: a question or anything else about this workspace
  → a read of the content it names (a listing or ``pwd`` reads nothing);
- ``need.look``: a request no rule recognises that still names files → a
  read of them. Greetings, memory chores and general questions owe nothing.

Named files are resolved against the workspace when the run starts (a
bare ``config.json`` is the root file if it exists, else the only file of
that name) and recorded, so a replay judges the same paths.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field

from k1412_ls.core.intent import classify_intent
from k1412_ls.core.vocabulary import extract_targets, is_report_path, is_source_path

EVIDENCE_KINDS: tuple[str, ...] = ("artifact", "source", "execution", "tests", "build", "commit", "deletion",
                                   "report", "benchmark", "inspection")
TEST_FILE = re.compile(r"(?:^|/)(?:test_[^/]*|[^/]*_test\.[a-z]+|[^/]*\.(?:test|spec)\.[a-z]+)$")
# Words before a named file that make it material the request works from, not a file to change.
_INPUT_BEFORE = re.compile(r"(?:\bfor|\bfrom|\bof|\busing|\bbased\s+on|\bagainst|\bcovering|\bread|根据|针对|读取|基于|为|给)"
                           r"\s*(?:the\s+)?(?:functions?\s+in\s+|code\s+in\s+|module\s+)?`?$", re.IGNORECASE)
# A file the request names as the destination of results.
_DESTINATION_BEFORE = re.compile(r"(?:\bto|\binto|\bin|\bas|写入|写到|保存到|保存为|存到|存为|输出到|导出到|记录到|放到|放进)"
                                 r"\s*(?:a\s+)?(?:new\s+)?(?:file\s+)?(?:called\s+|named\s+)?`?$", re.IGNORECASE)

Resolver = Callable[[str], tuple[str, bool]]


@dataclass(frozen=True)
class Requirements:
    """The evidence kinds a request needs, the rules that derived them, and the files it names."""

    kinds: tuple[str, ...]
    rules: tuple[str, ...]
    targets: tuple[str, ...]
    request: str = ""
    question: bool = False
    inputs: tuple[str, ...] = ()        # named files the request works from (need not change)
    existing: tuple[str, ...] = ()      # named files that existed when the run started
    destinations: tuple[str, ...] = ()  # named files the request sends results to
    tags: frozenset[str] = field(default_factory=frozenset)

    def needs(self, kind: str) -> bool:
        """Whether ``kind`` of evidence is required."""
        return kind in self.kinds

    @property
    def source_targets(self) -> tuple[str, ...]:
        """Named source files the request asks to write (inputs excluded)."""
        return tuple(t for t in self.targets if is_source_path(t) and t not in self.inputs)

    @property
    def report_targets(self) -> tuple[str, ...]:
        """Named files that can hold a report (a report request must write one of them)."""
        return tuple(t for t in self.targets if is_report_path(t) and t not in self.inputs)

    @property
    def change_targets(self) -> tuple[str, ...]:
        """Named files that must end changed (or deleted): every named file that is not an input."""
        return tuple(t for t in self.targets if t not in self.inputs)

    def as_record(self) -> dict[str, object]:
        """What ``run.created`` records so that a replay judges the same paths."""
        return {"targets": list(self.targets), "existing": list(self.existing)}


def _positions(request: str, name: str) -> list[int]:
    return [m.start() for m in re.finditer(re.escape(name), request)]


def _is_input(request: str, name: str, tags: frozenset[str]) -> bool:
    before = [request[max(0, p - 40):p] for p in _positions(request, name)]
    if "tests" in tags and "source" in tags and not TEST_FILE.search(name):
        return True  # "add tests for calc.py": calc.py is what the tests exercise
    return bool(before) and all(_INPUT_BEFORE.search(b) for b in before)


def derive_requirements(request: str, resolve: Resolver | None = None,
                        recorded: Mapping[str, object] | None = None) -> Requirements:
    """The evidence ``request`` needs before a run may say ``completed``.

    ``resolve`` maps a named file to its workspace path and whether it
    exists (the runtime's workspace lookup); ``recorded`` is what an earlier
    derivation recorded (replay), which wins over both.
    """
    decision = classify_intent(request)
    tags = decision.tags
    kinds: set[str] = set()
    rules: list[str] = []

    def need(kind: str, rule: str) -> None:
        kinds.add(kind)
        if rule not in rules:
            rules.append(rule)

    named = extract_targets(request)
    targets, existing = _resolved(named, resolve, recorded)
    question = "question" in tags and "change" not in tags and "source" not in tags
    if not question and tags & {"artifact", "change"}:
        need("artifact", "need.artifact")
    if "source" in tags:
        need("source", "need.source")
        need("artifact", "need.source")
    if "execution" in tags or "lint" in tags:
        need("execution", "need.execution")
    if "tests" in tags and (question or tags & {"execution", "change", "artifact"} or "workspace" in tags):
        need("tests", "need.tests")
    if "build" in tags:
        need("build", "need.build")
    if "commit" in tags and not question:
        need("commit", "need.commit")
        kinds.discard("execution")
    if "deletion" in tags and not question:
        need("deletion", "need.deletion")
    if "report" in tags:
        need("report", "need.report")
    if "measurement" in tags:
        need("benchmark", "need.benchmark")
        need("execution", "need.benchmark")
    about_workspace = "workspace" in tags or bool(targets)
    if "git" in tags or (tags & {"analysis", "comparison", "question"} and about_workspace):
        need("inspection", "need.inspection")
    if not kinds and targets and "greeting" not in tags and "memory" not in tags:
        need("inspection", "need.look")
    if kinds - {"inspection"} and "inspection" in kinds and not question:
        kinds.discard("inspection")
        rules = [r for r in rules if r not in ("need.inspection", "need.look")]
    if not kinds:
        rules.append("need.nothing")
    ordered = tuple(kind for kind in EVIDENCE_KINDS if kind in kinds)
    by_name = dict(zip(named, targets, strict=True))
    inputs = tuple(by_name[n] for n in named if _is_input(request, n, tags))
    destinations = tuple(by_name[n] for n in named
                         if any(_DESTINATION_BEFORE.search(request[max(0, p - 30):p]) for p in _positions(request, n)))
    return Requirements(ordered, (*decision.rules, *rules), targets, request, question, inputs, existing,
                        destinations, tags)


def _resolved(named: tuple[str, ...], resolve: Resolver | None,
              recorded: Mapping[str, object] | None) -> tuple[tuple[str, ...], tuple[str, ...]]:
    if recorded is not None:
        targets = recorded.get("targets")
        existing = recorded.get("existing")
        if isinstance(targets, list) and len(targets) == len(named) and all(isinstance(t, str) for t in targets):
            exist = tuple(e for e in existing if isinstance(e, str)) if isinstance(existing, list) else ()
            return tuple(targets), exist
    if resolve is None:
        return named, ()
    targets: list[str] = []
    exist: list[str] = []
    for name in named:
        path, found = resolve(name)
        targets.append(path)
        if found:
            exist.append(path)
    return tuple(targets), tuple(exist)
