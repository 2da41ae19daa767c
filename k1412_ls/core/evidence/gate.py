"""The completion gate (docs/evidence.md): may this run say ``completed``?

``CompletionGate.check`` runs when the model answers without tool calls;
``CompletionGate.state`` can run at every step (LSP progress, events) and
uses the last answer the gate saw, so the state reported at the end of a run
agrees with the verdict that ended it. The gate never counts rejections
itself: the loop does, against ``max_rejections``.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from k1412_ls.core.evidence.claims import find_claims
from k1412_ls.core.evidence.constraints import violations
from k1412_ls.core.evidence.contract import checked_items, has_constraints
from k1412_ls.core.evidence.ledger import EvidenceLedger, IntegrityEntry, WriteEntry
from k1412_ls.core.evidence.proof import Evidence, Problem, failure_problems
from k1412_ls.core.evidence.requirements import Requirements
from k1412_ls.core.evidence.rules import CHECKS
from k1412_ls.core.evidence.run_context import runs_in_context
from k1412_ls.text.vocabulary import extract_targets


@dataclass(frozen=True)
class Verdict:
    """The gate's answer: complete or not, which kinds were required and satisfied, and what is missing.

    ``missing`` holds one human-readable line per problem, each starting with
    its kind (``"artifact: hello.py was written but never verified …"``);
    ``instruction`` is the focused recovery message for the model.
    """

    complete: bool
    required: list[str]
    satisfied: list[str]
    missing: list[str]
    instruction: str
    problems: tuple[Problem, ...] = field(default=(), repr=False)
    contract: list[str] = field(default_factory=list)  # each item of the contract, marked ✓ or ✗

    @property
    def missing_kinds(self) -> list[str]:
        """The required kinds that are not satisfied."""
        return [kind for kind in self.required if kind not in self.satisfied]

    def as_state(self) -> dict[str, list[str]]:
        """The ``evidence`` object of the run result."""
        return {"required": list(self.required), "satisfied": list(self.satisfied), "missing": list(self.missing),
                "contract": list(self.contract)}


def recovery_instruction(problems: list[Problem]) -> str:
    """One focused message: what is missing and the tool call that would prove it."""
    if not problems:
        return ""
    remedies: list[str] = []
    for problem in problems:
        if problem.remedy not in remedies:
            remedies.append(problem.remedy)
    first, *rest = remedies
    text = f"Before finishing, {first}"
    for remedy in rest[:3]:
        text += f" Also {remedy}"
    missing = "; ".join(str(p) for p in problems[:4])
    return f"Not proven yet: {missing}. {text}"


def constraint_problems(requirements: Requirements, integrity: list[IntegrityEntry],
                        writes: list[WriteEntry]) -> list[Problem]:
    """What the run changed that the request forbade (``core.evidence.constraints``; existing tests when it
    said to leave them alone)."""
    problems = _change_set_problems(requirements, writes)
    if not requirements.tests_frozen:
        return problems
    latest: dict[str, IntegrityEntry] = {}
    for entry in integrity:
        latest[entry.path] = entry
    changed = [e for e in latest.values() if e.change not in ("intact", "created")]
    return problems + [Problem("constraint", f"the request said not to change the tests, but {e.path} was changed "
                    f"({e.why or e.change})",
                    f"put {e.path} back as it was (the request forbids changing the tests) and fix the code instead.")
            for e in changed[:3]]


def net_changes(writes: list[WriteEntry]) -> list[str]:
    """Paths the run changed, less those it created and removed again (nothing left of them)."""
    steps: list[tuple[str, str]] = []
    for entry in writes:
        if entry.action == "move" and entry.from_path:
            steps.append((entry.from_path, "delete"))
        steps.append((entry.path, entry.action))
    first: dict[str, str] = {}
    last: dict[str, str] = {}
    for path, action in steps:
        first.setdefault(path, action)
        last[path] = action
    return [p for p in last if not (first[p] == "create" and last[p] == "delete")]


def _change_set_problems(requirements: Requirements, writes: list[WriteEntry]) -> list[Problem]:
    constraints = requirements.constraints
    if not constraints.any:
        return []
    resolve = dict(zip(extract_targets(requirements.request), requirements.targets, strict=False))
    bad = violations(constraints, net_changes(writes), resolve, requirements.destinations)
    return [Problem("constraint", f"{path} was changed, but {why}",
                    f"put {path} back as it was (`git checkout -- {path}`, or rewrite it) and keep to what the "
                    "request allows.") for path, why in bad[:3]]


class CompletionGate:
    """Checks a run's ledger against the evidence its request requires."""

    def __init__(self, requirements: Requirements, max_rejections: int = 2) -> None:
        self.requirements = requirements
        self.max_rejections = max_rejections
        self.last_message = ""

    def evaluate(self, ledger: EvidenceLedger, final_message: str) -> Verdict:
        """The verdict for ``final_message`` without remembering it."""
        writes, looks, runs = ledger.snapshot()
        integrity = ledger.integrity_snapshot()
        runs = runs_in_context(writes, runs, self.requirements, integrity)
        evidence = Evidence(writes, looks, runs, self.requirements, final_message, tuple(ledger.skipped))
        problems: list[Problem] = []
        satisfied: list[str] = []
        required = list(self.requirements.kinds)
        for kind in required:
            found = CHECKS[kind](evidence)
            if kind == required[0] and not self.requirements.question and not {"execution", "tests", "build"} & set(
                    required):
                # Work that failed and was never made to succeed cannot be complete, whatever was asked.
                found = found + [p for p in failure_problems(evidence, kind) if str(p) not in map(str, found)]
            if found:
                problems.extend(found)
            else:
                satisfied.append(kind)
        broken = constraint_problems(self.requirements, integrity, writes)
        if broken or has_constraints(self.requirements):
            required.append("constraints")
            if broken:
                problems.extend(broken)
            else:
                satisfied.append("constraints")
        claimed = CHECKS["claims"](evidence)
        if find_claims(final_message) or claimed:
            required.append("claims")
            if claimed:
                problems.extend(claimed)
            else:
                satisfied.append("claims")
        contract = checked_items(self.requirements, satisfied, tuple(problems), "claims" in required)
        return Verdict(
            complete=not problems, required=required, satisfied=satisfied, contract=contract,
            missing=[str(p) for p in problems], instruction=recovery_instruction(problems), problems=tuple(problems),
        )

    def check(self, ledger: EvidenceLedger, final_message: str) -> Verdict:
        """The verdict on a run that wants to finish with ``final_message``."""
        self.last_message = final_message
        return self.evaluate(ledger, final_message)

    def state(self, ledger: EvidenceLedger) -> dict[str, list[str]]:
        """``{"required", "satisfied", "missing"}`` now, judged with the last answer seen (if any)."""
        return self.evaluate(ledger, self.last_message).as_state()
