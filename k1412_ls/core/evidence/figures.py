"""Figures: numbers a report or an answer states must be numbers this run really printed (or read).

A measurement (a number with a decimal point or a unit, ``core.numbers``) must appear verbatim in the
output of a command that really ran before the carrier was written, with a compatible unit
(``0.213 ms`` is not ``0.213 s``). Counts in a results file (three or more digits, years aside) may
also come from files the run read or code it wrote, or from the request.
"""

from __future__ import annotations

import re
from decimal import Decimal, InvalidOperation

from k1412_ls.core.evidence.proof import Evidence, FileState, Problem, names
from k1412_ls.text.numbers import measurement_units
from k1412_ls.text.vocabulary import is_source_path

Pool = dict[str, set[str]]


def measured(ev: Evidence, before: int | None) -> Pool:
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
        add_numbers(pool, run.numbers, dict(run.units))
    return pool


def add_numbers(pool: Pool, numbers: tuple[str, ...] | frozenset[str], units: dict[str, tuple[str, ...]]) -> None:
    for number in numbers:
        pool.setdefault(number, set()).update(units.get(number) or ("",))


_SIZE = re.compile(r"^(?:[KMGT]i?B(?:/s)?|B|bytes?)$")
_SECONDS = {"ns": Decimal("1e-9"), "us": Decimal("1e-6"), "ms": Decimal("1e-3"), "s": Decimal(1), "min": Decimal(60),
            "h": Decimal(3600)}


def _converted(pool: Pool, figure: str, stated: tuple[str, ...]) -> bool:
    """Whether ``figure stated-unit`` is a printed time in another unit, exactly (``250 ms`` = ``0.25 s``)."""
    try:
        value = Decimal(figure)
    except InvalidOperation:
        return False
    for unit in stated:
        if unit not in _SECONDS:
            continue
        for number, units in pool.items():
            for printed in units & _SECONDS.keys():
                try:
                    if Decimal(number) * _SECONDS[printed] == value * _SECONDS[unit]:
                        return True
                except InvalidOperation:
                    continue
    return False


def unproven_figures(pool: Pool, figures: list[str] | tuple[str, ...], units: dict[str, tuple[str, ...]]) -> list[str]:
    """Figures not printed verbatim (or as the same time in another unit), or printed with another unit
    (``0.213 ms`` is not ``0.213 s``)."""
    missing: list[str] = []
    for figure in figures:
        seen = pool.get(figure)
        stated = units.get(figure) or ()
        # A size needs its unit printed too: a bare "27" from `wc -c` is 27 bytes, not 27 KB.
        strict = any(_SIZE.match(u) for u in stated)
        if seen is None or (stated and ("" not in seen or strict) and not set(stated) & seen):
            if stated and _converted(pool, figure, stated):
                continue
            missing.append(figure + (f" {stated[0]}" if stated and seen is not None else ""))
    return missing


def _counts(state: FileState) -> list[str]:
    """Plain numbers of three or more digits a results file states (counts, totals), years aside."""
    return [n for n in state.last.numbers if n.isdigit() and len(n) >= 3 and not 1900 <= int(n) <= 2100
            and n not in state.last.measurements]


def known_numbers(ev: Evidence, before: int) -> Pool:
    """Where a count in a results file may come from besides output: files read, code written, the request."""
    pool = measured(ev, before)
    for look in ev.looks:
        add_numbers(pool, look.numbers, {})
    for write in ev.writes:
        if write.tool != "run_command" and write.seq < before and is_source_path(write.path):
            add_numbers(pool, write.numbers, {})
    for run in ev.runs:
        # A count a look printed (wc -l, pytest --co), and a port or size the command itself used.
        if run.succeeded and run.shape.role != "print" and not run.shape.faked_summary and run.seq < before:
            add_numbers(pool, run.numbers, {})
        add_numbers(pool, tuple(re.findall(r"\d+(?:\.\d+)?", run.command)), {})
    add_numbers(pool, tuple(re.findall(r"\d+", ev.requirements.request)), {})
    return pool


def unproven_results(ev: Evidence, state: FileState) -> list[str]:
    """Figures of a results file that nothing printed: measurements must come from command output (with
    their units); counts may also come from what the run read or wrote as code."""
    before = state.last.seq + (1 if state.last.by_command else 0)
    missing = unproven_figures(measured(ev, before), state.last.measurements, dict(state.last.units))
    if state.path in ev.requirements.destinations:
        missing += unproven_figures(known_numbers(ev, before), _counts(state), {})
    return missing


def answer_figures(ev: Evidence) -> list[Problem]:
    """Figures with a unit in the answer (times, %, ×, rates, sizes) must come from this run: printed by a
    command, read from a file, written by a tool, or given in the request."""
    units = {k: tuple(v) for k, v in measurement_units(ev.final_message).items()}
    if not units or ev.requirements.needs("benchmark"):
        return []  # a benchmark request checks its figures more strictly
    pool: Pool = {}
    for run in ev.runs:
        if run.shape.role != "print" and not run.shape.faked_summary and run.source == "exec":
            add_numbers(pool, run.numbers, dict(run.units))
    for look in ev.looks:
        add_numbers(pool, look.numbers, {})
    for write in ev.writes:
        if write.tool != "run_command":
            add_numbers(pool, write.numbers, {})
    add_numbers(pool, tuple(re.findall(r"\d+(?:\.\d+)?", ev.requirements.request)), {})
    unproven = unproven_figures(pool, list(units), units)
    if not unproven:
        return []
    return [Problem("claims", f"the answer states {names(unproven)}, which nothing in this run printed or read",
                    "quote only figures that a command printed (run the measurement), or leave them out.")]


# "How many …?": a count (wc -l, grep -c, ls | wc) is a fair answer, and the answer's numbers must be counts
# the run saw. TOTALS asks for a computed figure, whose numbers must also have been printed.
COUNTING = re.compile(r"\bhow\s+(?:many|much|big|large|long)\b|\bnumber\s+of\b|多少|几个|几行|几条|数量|有多大",
                      re.IGNORECASE)
TOTALS = re.compile(r"\btotal\b|\bsum\b|\baverage\b|\bmean\b|总和|总数|合计|平均", re.IGNORECASE)


def answer_counts(ev: Evidence) -> list[Problem]:
    """Counts in the answer to a find-out request come from what the run printed, read or wrote as code:
    numbers of three or more digits when it ran something ("run bench.py and tell me the comparisons"),
    and of two or more when it asks how many ("how many lines does app.py have?")."""
    req = ev.requirements
    counting = req.question and bool(COUNTING.search(req.request) or TOTALS.search(req.request))
    if not (req.question and (req.needs("execution") or counting)):
        return []
    digits = 2 if counting else 3
    text = ev.final_message.replace(",", "")
    if counting and COUNTING.search(req.request):
        small = [n for n in re.findall(r"(?<![\w.,])\d+(?![\w.,]\d)", text) if not 1900 <= int(n) <= 2100]
        pool = known_numbers(ev, 1 << 60)
        if small and not any(n in pool for n in small):
            return [Problem("claims", f"the answer counts {names(small)}, but the run never saw that count",
                            "report the count the command printed.")]
    pattern = r"(?<![\w.,])\d{" + str(digits) + r",}(?![\w.,]\d)"
    numbers = [n for n in re.findall(pattern, text) if not 1900 <= int(n) <= 2100]
    if not numbers:
        return []
    unproven = unproven_figures(known_numbers(ev, 1 << 60), numbers, {})
    if not unproven:
        return []
    return [Problem("claims", f"the answer states {names(unproven)}, which nothing in this run printed",
                    "report the numbers the command printed.")]
