"""Numeric tokens in text: how benchmark reports are checked against execution output.

Two views of the same tokens:

- :func:`extract_numbers` — every number, used for command output (the pool a
  report's figures must come from);
- :func:`extract_measurements` — only the numbers a report states as
  measurements, so list numbering, years, counts, versions and section
  numbers in a report never cause a false refusal.

Both normalize a token the same way (commas removed, sign dropped), so a
measurement matches an output number exactly when it was copied verbatim.
"""

from __future__ import annotations

import re
from collections.abc import Callable

# A number as people write it in reports: 12, -3.5, 1,234.5, 1.2e-3, 45%.
_NUMBER = re.compile(r"(?<![\w.])[-+]?(?:\d{1,3}(?:,\d{3})+|\d+)(?:\.\d+)?(?:[eE][-+]?\d+)?")

MAX_NUMBERS = 500

# Units that make an integer a measurement ("12 ms", "3x", "45%", "2 GB", "12 毫秒").
_UNIT_AFTER = re.compile(
    r"(?:\s?(?:ns|us|µs|μs|ms|s|nsec|usec|µsec|μsec|msec|sec|secs|seconds?|min|mins|minutes?|hrs?|hours?|"
    r"[KMGT]i?B(?:/s)?|B|bytes?|ops/s(?:ec)?|ops|req/s|rps|qps|fps|it/s|loops?|[kMG]?Hz)(?![A-Za-z])"
    r"|[x×](?![A-Za-z])|\s?%"
    r"|\s?(?:毫秒|微秒|纳秒|秒|分钟|小时|倍|次/秒))"
)
# Words right before a number that make it a version, not a measurement ("Python 3.11", "v1.2").
_VERSION_BEFORE = re.compile(r"(?:\bv|\bversion\s*|\bpython\s*|\bnode\s*|\bpy|版本\s*)$", re.IGNORECASE)
# A heading or list label: "2.1 Results", "## 3.2 Method" at the start of a line.
_HEADING_BEFORE = re.compile(r"(?:^|\n)[ \t]*(?:#+[ \t]*)?$")


def _normalize(token: str) -> str:
    return token.lstrip("+-").replace(",", "")


def _distinct_tokens(text: str, limit: int, keep: Callable[[str, int, int], bool] | None = None) -> list[str]:
    seen: dict[str, None] = {}
    for match in _NUMBER.finditer(text):
        if keep is not None and not keep(text, match.start(), match.end()):
            continue
        token = _normalize(match.group(0))
        if token not in seen:
            seen[token] = None
            if len(seen) >= limit:
                break
    return list(seen)


def extract_numbers(text: str, limit: int = MAX_NUMBERS) -> list[str]:
    """Distinct numeric tokens in order of first appearance, commas removed, sign dropped."""
    return _distinct_tokens(text, limit)


def is_measurement(text: str, start: int, end: int) -> bool:
    """Whether the number at ``text[start:end]`` is stated as a measurement.

    Rule ``measurement``: a number with a decimal point or exponent, or one
    followed by a unit (time, size, rate, ``%``, ``x``); except versions
    (``v1.2``, ``Python 3.11``, ``3.11.4``, ``127.0.0.1``) and heading or
    list labels at the start of a line followed by text (``2.1 Results``).
    """
    token = text[start:end]
    after = text[end:end + 12]
    before = text[max(0, start - 12):start]
    if re.match(r"\.\d", after):  # dotted triple: a version or an address
        return False
    if _VERSION_BEFORE.search(before):
        return False
    has_unit = bool(_UNIT_AFTER.match(after))
    fractional = "." in token or "e" in token.lower()
    if not (has_unit or fractional):
        return False
    if fractional and not has_unit and _HEADING_BEFORE.search(text[max(0, start - 80):start]) \
            and re.match(r"\.?[ \t]+\S", after):
        return False
    return True


def extract_measurements(text: str, limit: int = MAX_NUMBERS) -> list[str]:
    """Distinct measurement tokens (see :func:`is_measurement`), normalized like :func:`extract_numbers`."""
    return _distinct_tokens(text, limit, is_measurement)


_UNIT_FAMILIES: dict[str, str] = {
    "ns": "ns", "nsec": "ns", "us": "us", "µs": "us", "μs": "us", "usec": "us", "µsec": "us", "μsec": "us",
    "ms": "ms", "msec": "ms", "s": "s", "sec": "s", "secs": "s", "second": "s", "seconds": "s", "min": "min",
    "mins": "min", "minute": "min", "minutes": "min", "hr": "h", "hrs": "h", "hour": "h", "hours": "h",
    "毫秒": "ms", "微秒": "us", "纳秒": "ns", "秒": "s", "分钟": "min", "小时": "h", "倍": "x", "×": "x", "x": "x",
}


def unit_family(unit: str) -> str:
    """A unit's canonical spelling, so ``msec`` and ``ms`` agree and ``ms`` and ``s`` do not."""
    clean = unit.strip()
    return _UNIT_FAMILIES.get(clean, _UNIT_FAMILIES.get(clean.lower(), clean))


def measurement_units(text: str, limit: int = MAX_NUMBERS) -> dict[str, list[str]]:
    """For each number followed by a unit: the canonical units it was printed with (``{"0.213": ["ms"]}``)."""
    found: dict[str, list[str]] = {}
    for match in _NUMBER.finditer(text):
        unit = _UNIT_AFTER.match(text, match.end())
        if unit is None:
            continue
        token = _normalize(match.group(0))
        family = unit_family(unit.group(0))
        units = found.setdefault(token, [])
        if family not in units:
            units.append(family)
        if len(found) >= limit:
            break
    return found
