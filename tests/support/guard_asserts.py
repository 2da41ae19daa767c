"""Shared assertions for the guard tests."""

from __future__ import annotations

import re

from k1412_ls.tools.registry import ToolResult


def assert_refusal(result: ToolResult | None, *fragments: str) -> str:
    """A refusal is ok false with one sentence (no line break) that says what to do next."""
    assert result is not None, "expected a refusal"
    assert result.ok is False
    error = result.data["error"]
    assert "\n" not in error
    assert error.endswith(".")
    assert not re.search(r"[.!?] [A-Z]", error), f"more than one sentence: {error}"
    for fragment in fragments:
        assert fragment in error
    return error

