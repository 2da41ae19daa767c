"""What proof a request owes (SPEC §9), derived from the shared vocabulary.

Derivation rules, by name (each appears in ``Requirements.rules``):

- ``need.artifact``: an ``artifact`` tag (create/change a file) → artifact;
- ``need.source``: a ``source`` tag (write a script/function/program) →
  source, and artifact too, because a script is a file that must be verified;
- ``need.execution``: an ``execution`` tag (run, test, build, start) →
  execution, which needs a successful run, not just a look;
- ``need.report``: a ``report`` tag → report (written after an execution);
- ``need.benchmark``: a ``measurement`` tag (benchmark, performance,
  faster …) → benchmark and execution: figures must be copied from output;
- ``need.inspection``: a ``git`` request, or an ``analysis``, ``comparison``
  or ``question`` request about this workspace (``workspace`` tag or a named
  file) → inspection: the answer must rest on something read in this run.
  General knowledge ("what is the difference between a list and a tuple?")
  owes nothing;
- ``need.nothing``: greetings, memory chores, general questions and
  requests no rule recognises owe no workspace proof.

``inspection`` is dropped when a stronger kind is required, since every
stronger kind is itself proven by tool results that look at the workspace.
"""

from __future__ import annotations

from dataclasses import dataclass

from k1412_ls.core.intent import classify_intent
from k1412_ls.core.vocabulary import extract_targets, is_report_path, is_source_path

EVIDENCE_KINDS: tuple[str, ...] = ("artifact", "source", "execution", "report", "benchmark", "inspection")


@dataclass(frozen=True)
class Requirements:
    """The evidence kinds a request needs, the rules that derived them, and the files it names."""

    kinds: tuple[str, ...]
    rules: tuple[str, ...]
    targets: tuple[str, ...]
    request: str = ""

    def needs(self, kind: str) -> bool:
        """Whether ``kind`` of evidence is required."""
        return kind in self.kinds

    @property
    def source_targets(self) -> tuple[str, ...]:
        """Named files that are source code (a source request must write one of them)."""
        return tuple(t for t in self.targets if is_source_path(t))

    @property
    def report_targets(self) -> tuple[str, ...]:
        """Named files that can hold a report (a report request must write one of them)."""
        return tuple(t for t in self.targets if is_report_path(t))


def derive_requirements(request: str) -> Requirements:
    """The evidence ``request`` needs before a run may say ``completed``."""
    decision = classify_intent(request)
    tags = decision.tags
    kinds: set[str] = set()
    rules: list[str] = []

    def need(kind: str, rule: str) -> None:
        kinds.add(kind)
        if rule not in rules:
            rules.append(rule)

    if "artifact" in tags:
        need("artifact", "need.artifact")
    if "source" in tags:
        need("source", "need.source")
        need("artifact", "need.source")
    if "execution" in tags:
        need("execution", "need.execution")
    if "report" in tags:
        need("report", "need.report")
    if "measurement" in tags:
        need("benchmark", "need.benchmark")
        need("execution", "need.benchmark")
    targets = extract_targets(request)
    about_workspace = "workspace" in tags or bool(targets)
    if "git" in tags or (tags & {"analysis", "comparison", "question"} and about_workspace):
        need("inspection", "need.inspection")
    if kinds - {"inspection"}:
        kinds.discard("inspection")
        rules = [r for r in rules if r != "need.inspection"]
    if not kinds:
        rules.append("need.nothing")
    ordered = tuple(kind for kind in EVIDENCE_KINDS if kind in kinds)
    return Requirements(ordered, (*decision.rules, *rules), targets, request)
