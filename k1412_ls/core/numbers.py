"""Numeric tokens in text: how benchmark reports are checked against execution output."""

from __future__ import annotations

import re

# A number as people write it in reports: 12, -3.5, 1,234.5, 1.2e-3, 45%.
_NUMBER = re.compile(r"(?<![\w.])[-+]?(?:\d{1,3}(?:,\d{3})+|\d+)(?:\.\d+)?(?:[eE][-+]?\d+)?")

MAX_NUMBERS = 500


def extract_numbers(text: str, limit: int = MAX_NUMBERS) -> list[str]:
    """Distinct numeric tokens in order of first appearance, commas removed, sign dropped."""
    seen: dict[str, None] = {}
    for match in _NUMBER.finditer(text):
        token = match.group(0).lstrip("+-").replace(",", "")
        if token not in seen:
            seen[token] = None
            if len(seen) >= limit:
                break
    return list(seen)
