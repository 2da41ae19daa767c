"""Line windows of text: what read_file returns, from a document or streamed from a huge file.

A window holds at most :data:`MAX_WINDOW_LINES` lines and
:data:`MAX_WINDOW_BYTES` bytes of content; single lines longer than
:data:`MAX_LINE_CHARS` are cut with a marker so one minified line cannot
flood the model's context.
"""

from __future__ import annotations

import mimetypes
import os
from dataclasses import dataclass, field

from k1412_ls.limits import LIMITS

MAX_WINDOW_LINES = LIMITS.max_window_lines
MAX_WINDOW_BYTES = LIMITS.max_window_bytes
MAX_LINE_CHARS = LIMITS.max_line_chars
CUT_MARKER = " …[line cut: {total} characters in total]"

# Leading bytes of common binary formats, for a better description than "binary".
_SIGNATURES: tuple[tuple[bytes, str], ...] = (
    (b"\x89PNG\r\n\x1a\n", "image/png"),
    (b"\xff\xd8\xff", "image/jpeg"),
    (b"GIF8", "image/gif"),
    (b"%PDF-", "application/pdf"),
    (b"PK\x03\x04", "application/zip"),
    (b"\x1f\x8b", "application/gzip"),
    (b"\x7fELF", "application/x-executable"),
    (b"SQLite format 3\x00", "application/vnd.sqlite3"),
    (b"\x00asm", "application/wasm"),
)


def guess_mime(name: str, head: bytes) -> str:
    """A MIME type from the file's first bytes, else its name, else octet-stream."""
    for signature, mime in _SIGNATURES:
        if head.startswith(signature):
            return mime
    guessed, _ = mimetypes.guess_type(name)
    return guessed or "application/octet-stream"


def line_endings_of(text: str) -> str:
    """"crlf", "lf" or "mixed" for the line endings used in ``text``."""
    crlf = text.count("\r\n")
    lf = text.count("\n") - crlf
    if crlf and lf:
        return "mixed"
    return "crlf" if crlf else "lf"


@dataclass
class Window:
    """A window of lines ``start_line..end_line`` (1-based, inclusive) of a ``total_lines`` text."""

    lines: list[str]
    start_line: int
    total_lines: int
    final_newline: bool  # whether the window's last line ends with a newline
    cut_lines: list[int] = field(default_factory=list)

    @property
    def end_line(self) -> int:
        return self.start_line + len(self.lines) - 1

    @property
    def content(self) -> str:
        body = "\n".join(self.lines)
        return body + "\n" if self.lines and self.final_newline else body


def window_limit(start: int, end: int | None) -> int:
    """The last line number a window starting at ``start`` may reach before the byte cap."""
    cap = start + MAX_WINDOW_LINES - 1
    return cap if end is None else min(end, cap)


def cut_line(line: str, number: int, cut: list[int]) -> str:
    """``line`` limited to MAX_LINE_CHARS, recording ``number`` when it was cut."""
    if len(line) <= MAX_LINE_CHARS:
        return line
    cut.append(number)
    return line[:MAX_LINE_CHARS] + CUT_MARKER.format(total=len(line))


def text_window(text_lf: str, start: int, end: int | None) -> Window:
    """The window of an LF text from line ``start`` (callers check ``start`` is in range)."""
    lines = text_lf.split("\n")
    final_newline = text_lf.endswith("\n")
    if final_newline or text_lf == "":
        lines.pop()
    total = len(lines)
    last = min(window_limit(start, end), total)
    picked: list[str] = []
    cut: list[int] = []
    used = 0
    for number in range(start, last + 1):
        line = cut_line(lines[number - 1], number, cut)
        size = len(line.encode("utf-8", "surrogatepass")) + 1
        if picked and used + size > MAX_WINDOW_BYTES:
            break
        picked.append(line)
        used += size
    end_line = start + len(picked) - 1
    has_newline = end_line < total or final_newline
    return Window(picked, start, total, has_newline, cut)


def stream_window(fd: int, start: int, end: int | None) -> tuple[Window, str]:
    """A window read from a file descriptor without loading the file; also its line endings.

    Only the window's lines are kept (each capped at MAX_LINE_CHARS bytes
    while reading); the rest of the file is only counted.
    """
    last = window_limit(start, end)
    picked: list[str] = []
    cut: list[int] = []
    used = 0
    full = False
    crlf = lf = 0
    number = 1
    current = bytearray()
    current_len = 0
    ended_with_newline = True
    while True:
        chunk = os.read(fd, 1 << 20)
        if not chunk:
            break
        ended_with_newline = chunk.endswith(b"\n")
        if number > last or full:
            number += chunk.count(b"\n")
            continue
        pos = 0
        while True:
            newline_at = chunk.find(b"\n", pos)
            piece = chunk[pos:] if newline_at < 0 else chunk[pos:newline_at]
            in_window = start <= number <= last and not full
            if in_window and len(current) <= MAX_LINE_CHARS * 4:
                current += piece[: MAX_LINE_CHARS * 4 + 1 - len(current)]
            current_len += len(piece)
            if newline_at < 0:
                break
            if in_window:
                if current.endswith(b"\r"):
                    crlf += 1
                else:
                    lf += 1
                line = _decode_line(bytes(current), current_len, number, cut)
                size = len(line.encode("utf-8", "surrogatepass")) + 1
                if picked and used + size > MAX_WINDOW_BYTES:
                    full = True
                else:
                    picked.append(line)
                    used += size
            number += 1
            current.clear()
            current_len = 0
            pos = newline_at + 1
            if number > last or full:
                number += chunk.count(b"\n", pos)
                break
    total = number - 1
    if not ended_with_newline:
        total += 1
        if start <= total <= last and not full and len(picked) == total - start:
            picked.append(_decode_line(bytes(current), current_len, total, cut))
    end_line = start + len(picked) - 1
    window = Window(picked, start, total, end_line < total or ended_with_newline, cut)
    endings = "mixed" if crlf and lf else ("crlf" if crlf else "lf")
    return window, endings


def _decode_line(raw: bytes, full_len: int, number: int, cut: list[int]) -> str:
    if raw.endswith(b"\r") and full_len == len(raw):
        raw = raw[:-1]
    text = raw.decode("utf-8", errors="replace")
    if full_len > len(raw) + 1 or len(text) > MAX_LINE_CHARS:
        cut.append(number)
        return text[:MAX_LINE_CHARS] + CUT_MARKER.format(total=full_len)
    return text
