"""LSP positions and minimal edits: line breaks and code units as LSP defines them."""

from __future__ import annotations

import pytest

from k1412_ls.lsp.textedit import apply_replacement, minimal_replacement, offset_at, position_at


@pytest.mark.parametrize(("text", "offset", "encoding", "expected"), [
    ("a😀b", 2, "utf-16", (0, 3)),
    ("a😀b", 2, "utf-8", (0, 5)),
    ("a😀b", 2, "utf-32", (0, 2)),
    ("x\r\ny", 3, "utf-16", (1, 0)),
    ("x\ry", 2, "utf-16", (1, 0)),
    ("x\u2028y\nz", 4, "utf-16", (1, 0)),  # U+2028 is not an LSP line break
    ("é\nü😀", 4, "utf-8", (1, 2 + 4)),
])
def test_position_at_counts_lsp_lines_and_code_units(text: str, offset: int, encoding: str,
                                                     expected: tuple[int, int]) -> None:
    assert position_at(text, offset, encoding) == expected
    assert offset_at(text, *expected, encoding) == offset


@pytest.mark.parametrize(("old", "new", "span"), [
    ("hello world\n", "hello there\n", (6, 11, "there")),
    ("a\r\nb\r\n", "a\r\nc\r\n", (3, 4, "c")),
    ("a\r\nb", "a\nb", (1, 3, "\n")),  # never split CR LF
    ("abc", "abc", None),
    ("", "new\n", (0, 0, "new\n")),
    ("aaa", "aa", (2, 3, "")),
])
def test_minimal_replacement_is_one_range_that_reproduces_the_new_text(old: str, new: str,
                                                                       span: tuple[int, int, str] | None) -> None:
    change = minimal_replacement(old, new)
    if span is None:
        assert change is None
        return
    assert change is not None
    assert (change.start, change.end, change.text) == span
    assert apply_replacement(old, change) == new


def test_offset_at_clamps_positions_past_the_end_like_editors() -> None:
    assert offset_at("ab\ncd", 0, 99) == 2
    assert offset_at("ab\ncd", 7, 0) == 5
