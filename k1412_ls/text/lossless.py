"""One lossless encoding for everything K1412 records, and one way to show text on a terminal.

The record rule (event logs, undo manifests and indexes, the JSON K1412 prints):

* A record is JSON, written as UTF-8; a log is one record per line, split on ``\\n`` only.
* Every string is exactly the Python ``str`` K1412 held. File names come from the OS as
  :func:`os.fsdecode` gives them: a byte that is not UTF-8 (0x80–0xFF) is the lone surrogate
  U+DC80–U+DCFF (Python's ``surrogateescape``), so ``os.fsencode(name)`` is the name's bytes again.
* Characters UTF-8 cannot carry or that readers take for line breaks or hide — lone surrogates,
  C0 and C1 controls, U+2028/U+2029, bidirectional overrides and isolates, zero-width and other
  format characters, tag characters — are written as JSON ``\\uXXXX`` escapes (pairs for
  characters above U+FFFF), so the file is valid UTF-8, holds no line break but ``\\n`` between
  records, and reads back to the same strings with any JSON reader.

The terminal rule (:func:`visible`): the same characters are shown, never interpreted — C0
controls as their Unicode control pictures (ESC as ``␛``, CR as ``␍``), everything else as
``<U+XXXX>`` and undecodable name bytes as ``\\xNN`` — so escape sequences, carriage returns and
bidi overrides cannot move the cursor, erase a line, set the clipboard or reorder what the user reads.
"""

from __future__ import annotations

import json
import re
from typing import Any

# What is escaped in records and shown visibly on terminals (\t and \n are handled by the callers).
_HIDDEN = (
    "\x00-\x08\x0b-\x1f\x7f-\x9f"  # C0 (but \t, \n), DEL, C1
    "\u00ad\u034f\u061c\u115f\u1160\u17b4\u17b5\u180b-\u180f"  # soft hyphen, joiners, Arabic mark, fillers
    "\u200b-\u200f\u2028-\u202e\u2060-\u206f"  # zero-width, LRM/RLM, separators, embeddings, isolates
    "\u3164\ufe00-\ufe0f\ufeff\uffa0\ufff9-\ufffb"  # fillers, variation selectors, BOM, annotations
    "\ud800-\udfff"  # lone surrogates (a pair never reaches a Python str)
    "\U0001d173-\U0001d17a\U000e0000-\U000e0fff"  # musical format marks, tags and variation selectors
)
_IN_RECORD = re.compile(f"[{_HIDDEN}]")
_ON_TERMINAL = re.compile(f"[{_HIDDEN}\t\n]")


def _json_escape(match: re.Match[str]) -> str:
    code = ord(match.group())
    if code > 0xFFFF:
        code -= 0x10000
        return f"\\u{0xD800 + (code >> 10):04x}\\u{0xDC00 + (code & 0x3FF):04x}"
    return f"\\u{code:04x}"


def dumps(value: Any, *, indent: int | None = None) -> str:
    """``value`` as JSON under the record rule: valid UTF-8, no raw line break but the ones ``indent`` adds.

    The characters are only ever inside JSON strings (json writes nothing else outside ASCII), so
    replacing each with its escape keeps the JSON exact.
    """
    separators = (",", ":") if indent is None else (",", ": ")
    text = json.dumps(value, ensure_ascii=False, indent=indent, separators=separators)
    if text.isascii():  # the common case, fast: json escaped every C0 control already, DEL is left
        return text.replace("\x7f", "\\u007f")
    return _IN_RECORD.sub(_json_escape, text)


def loads(text: str | bytes) -> Any:
    """Read one record (Python's json reader keeps lone surrogate escapes, which pydantic's refuses)."""
    return json.loads(text)


def record_lines(text: str) -> list[str]:
    """The lines of a JSONL file: split on ``\\n`` only (never on U+2028, U+0085, \\v, \\f or \\x1c–\\x1e)."""
    lines = text.split("\n")
    return [line[:-1] if line.endswith("\r") else line for line in lines]


_PICTURES = {code: chr(0x2400 + code) for code in range(0x20)} | {0x7F: "\u2421"}


def _show(match: re.Match[str], keep_lines: bool) -> str:
    char = match.group()
    code = ord(char)
    if char in "\t\n" and keep_lines:
        return char
    if code in _PICTURES:
        return _PICTURES[code]
    if 0xDC80 <= code <= 0xDCFF:  # a byte of a file name that is not UTF-8
        return f"\\x{code - 0xDC00:02x}"
    return f"<U+{code:04X}>"


def visible(text: object, *, keep_lines: bool = True) -> str:
    """``text`` safe for a terminal: every control, format or bidi character shown, none interpreted.

    ``keep_lines`` keeps ``\\n`` and ``\\t`` as they are (a multi-line message); without it they show
    as ``␊`` and ``␉`` (one line of progress, one command in a prompt).
    """
    raw = text if isinstance(text, str) else str(text)
    return _ON_TERMINAL.sub(lambda m: _show(m, keep_lines), raw)


def terminal_json(value: Any) -> str:
    """``value`` as indented JSON for a terminal: exact JSON, nothing in it a terminal would interpret."""
    return dumps(value, indent=2)


class VisibleStream:
    """A text stream for a terminal that shows what :func:`visible` shows: every write goes through it.

    The CLI wraps its standard output and error in one, so no line it prints (progress, verdicts,
    replays, undo and stats reports, error sentences) can carry a control sequence; JSON it prints is
    made by :func:`terminal_json` first and passes unchanged.
    """

    def __init__(self, inner: Any) -> None:
        self.inner = inner

    def write(self, text: str) -> int:
        self.inner.write(visible(text))
        return len(text)

    def writelines(self, lines: Any) -> None:
        for line in lines:
            self.write(line)

    def __getattr__(self, name: str) -> Any:
        return getattr(self.inner, name)  # isatty, fileno, flush, encoding, buffer …
