"""The contract ("done when"): what the run owes, in the words a user reads, and which items are proven.

The gate's requirements are kinds of evidence (``artifact``, ``tests`` …) plus the files the request names
and the constraints it states. This module says each as one item a user can check at the start of a run
(``run.created`` carries it, the CLI and the editors show it) and marks each ✓ or ✗ in the verdict, with the
problem that keeps it open.
"""

from __future__ import annotations

from k1412_ls.core.evidence.proof import Problem, names
from k1412_ls.core.evidence.requirements import Requirements


def _files(paths: tuple[str, ...], fallback: str) -> str:
    return names(list(paths)) if paths else fallback


def contract_items(req: Requirements) -> list[tuple[str, str]]:
    """``(kind, item)`` for every obligation and constraint of ``req``, in the gate's order."""
    items: list[tuple[str, str]] = []
    changes = tuple(t for t in req.change_targets if t not in req.destinations)
    for kind in req.kinds:
        if kind == "artifact":
            items.append((kind, f"change {_files(changes, 'what the request names')} and verify it after the change"))
        elif kind == "source":
            items.append((kind, f"write the code as a source file ({_files(req.source_targets, 'a new file')})"))
        elif kind == "execution":
            items.append((kind, "run it, and it succeeds" if not req.question else "run it and report the outcome"))
        elif kind == "tests":
            items.append((kind, "run the tests and report them" if req.question
                          else "the whole test suite passes after the last change"))
        elif kind == "build":
            items.append((kind, "the named sources compile"))
        elif kind == "commit":
            extra = ", nothing left uncommitted" if req.commit_all else ""
            items.append((kind, f"new commits with the work reach the repository's HEAD{extra}"))
        elif kind == "deletion":
            items.append((kind, f"{_files(changes, 'the named files')} gone at the end"))
        elif kind == "report":
            items.append((kind, f"the report ({_files(req.destinations or req.report_targets, 'a file')}) written "
                          "after the run it describes"))
        elif kind == "benchmark":
            items.append((kind, "every figure printed by a command that ran"))
        elif kind == "inspection":
            items.append((kind, f"read {_files(req.targets, 'the code it asks about')}"))
    c = req.constraints
    limits = []
    if c.only is not None:
        limits.append(f"change only {names(list(c.only))}")
    if c.no_code:
        limits.append("change no code")
    if c.no_change:
        limits.append("change nothing")
    if req.tests_frozen:
        limits.append("leave the existing tests unchanged")
    if limits:
        items.append(("constraints", "; ".join(limits)))
    return items


def has_constraints(req: Requirements) -> bool:
    return req.constraints.any or req.tests_frozen


def checked_items(req: Requirements, satisfied: list[str], problems: tuple[Problem, ...],
                  claims: bool) -> list[str]:
    """The contract with each item marked ``✓`` (proven) or ``✗`` (open, with the first problem's detail)."""
    lines: list[str] = []
    items = contract_items(req)
    if claims:
        items.append(("claims", "every claim of the answer backed by this run's events"))
    for kind, item in items:
        if kind in satisfied:
            lines.append(f"✓ {item}")
            continue
        why = next((p.detail for p in problems if p.kind == kind or (kind == "constraints" and p.kind == "constraint")),
                   "")
        lines.append(f"✗ {item}" + (f" — {why}" if why else ""))
    return lines


__all__ = ["checked_items", "contract_items", "has_constraints"]
