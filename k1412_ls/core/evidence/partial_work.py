"""Rule ``artifact``, its part-by-part half: every value set, every named function checked, every file a change
clause names changed (``request_parts``, ``requested_values``)."""

from __future__ import annotations

from k1412_ls.core.evidence.ledger import FileState
from k1412_ls.core.evidence.proof import (
    Evidence,
    Problem,
    last_code_write,
    names,
    passing_tests_after,
    same_path,
)
from k1412_ls.core.evidence.request_parts import named_functions, unchecked_functions
from k1412_ls.core.evidence.requested_values import values_not_held


def partial_work(ev: Evidence, files: dict[str, FileState], wanted: tuple[str, ...], changed_targets: list[str],
                 deleting: bool) -> list[Problem]:
    """Parts of the request a run that changed something left undone or unchecked."""
    req = ev.requirements
    problems: list[Problem] = []
    unset = values_not_held(req.request, [s for p, s in files.items() if any(same_path(p, t) for t in wanted)])
    if unset and not deleting:
        problems.append(Problem("artifact", f"the request sets {names(unset)}, which no changed file holds",
                                f"write {unset[0]} where the request asks, then read the file back."))
    after = last_code_write(ev)
    if files and not passing_tests_after(ev, after) and not any(
            look.seq > after and look.kind in ("read", "git") for look in ev.looks):
        checks = [r.command for r in ev.runs if r.seq >= after and r.succeeded]
        unchecked = unchecked_functions(named_functions(req.request), checks)
        if unchecked:
            problems.append(Problem("artifact", f"the checks after the change named some of the functions the "
                                    f"request names, never {names(unchecked)}",
                                    f"check {unchecked[0]} too (call it, run its tests or read it back)."))
    left = [t for t in req.each_target if t in wanted and t not in changed_targets]
    if changed_targets and left:
        problems.append(Problem("artifact", f"{names(left)} was never {'deleted' if deleting else 'changed'} in "
                                "this run, though the request asks for the change there too",
                                f"make the requested change to {left[0]} as well, then verify it."))
    return problems
