"""Bounded output capture: the first and last bytes of a stream, whatever its size.

A command may print gigabytes or one 100 MB line; the server keeps at most
``head_bytes + tail_bytes`` of it and reports how many bytes it dropped.
Errors usually live at the end, so the tail gets the larger share.
The kept bytes are decoded losslessly: a byte that is not UTF-8 becomes the lone surrogate
U+DC80–U+DCFF (``surrogateescape``), so the log records exactly the bytes the command wrote
(k1412_ls/text/lossless.py).
"""

from __future__ import annotations

from k1412_ls.limits import LIMITS

HEAD_BYTES = LIMITS.output_head_bytes
TAIL_BYTES = LIMITS.output_tail_bytes


def omission_marker(omitted: int) -> str:
    """The line that replaces dropped output; it states the exact byte count."""
    return f"\n[… {omitted} bytes omitted …]\n"


def incomplete_utf8_suffix(data: bytes | bytearray) -> int:
    """How many trailing bytes form the start of a UTF-8 character that is not complete yet."""
    for back in range(1, min(4, len(data)) + 1):
        byte = data[-back]
        if byte & 0xC0 == 0x80:  # a continuation byte: keep looking for the lead byte
            continue
        if byte >= 0xC0:
            needed = 2 if byte < 0xE0 else 3 if byte < 0xF0 else 4
            return back if needed > back else 0
        return 0
    return 0


def _leading_continuations(data: bytes | bytearray) -> int:
    count = 0
    while count < min(3, len(data)) and data[count] & 0xC0 == 0x80:
        count += 1
    return count


class HeadTailBuffer:
    """Keeps the head and tail of a byte stream in bounded memory and counts every byte."""

    def __init__(self, head_bytes: int = HEAD_BYTES, tail_bytes: int = TAIL_BYTES) -> None:
        self.head_bytes = head_bytes
        self.tail_bytes = tail_bytes
        self.head = bytearray()
        self.tail = bytearray()
        self.total = 0

    def write(self, data: bytes) -> None:
        """Append ``data``; memory stays within the caps however much arrives."""
        self.total += len(data)
        room = self.head_bytes - len(self.head)
        if room > 0:
            self.head += data[:room]
            data = data[room:]
        if not data:
            return
        if len(data) >= self.tail_bytes:
            self.tail = bytearray(data[-self.tail_bytes:])
        else:
            self.tail += data
            excess = len(self.tail) - self.tail_bytes
            if excess > 0:
                del self.tail[:excess]

    @property
    def omitted(self) -> int:
        """Bytes that were produced but are no longer held."""
        return self.total - len(self.head) - len(self.tail)

    def take_incomplete_suffix(self) -> bytes:
        """Remove and return a trailing partial UTF-8 character (it belongs to the next read)."""
        buffer = self.tail if self.tail else self.head
        cut = incomplete_utf8_suffix(buffer)
        if not cut:
            return b""
        suffix = bytes(buffer[-cut:])
        del buffer[-cut:]
        self.total -= cut
        return suffix

    def render(self) -> tuple[str, int]:
        """The kept text with an omission marker where bytes were dropped, and the omitted count."""
        if self.omitted == 0:
            return (bytes(self.head) + bytes(self.tail)).decode("utf-8", "surrogateescape"), 0
        # Cut partial characters at the gap instead of printing replacement characters.
        head_cut = incomplete_utf8_suffix(self.head)
        tail_cut = _leading_continuations(self.tail)
        head = bytes(self.head[: len(self.head) - head_cut]).decode("utf-8", "surrogateescape")
        tail = bytes(self.tail[tail_cut:]).decode("utf-8", "surrogateescape")
        omitted = self.omitted + head_cut + tail_cut
        return f"{head}{omission_marker(omitted)}{tail}", omitted
