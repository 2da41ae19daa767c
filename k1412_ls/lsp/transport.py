"""Message framing for stdio and TCP: a size cap, and resynchronisation after any malformed frame.

pygls 2.1.1 trusts ``Content-Length``: 99999999999999 ends in MemoryError and
2000000000 waits forever for bytes that never come, and after one bad frame
it never finds the next. Here:

- a frame over :data:`MAX_FRAME_BYTES` is refused (the client is told) and
  its body is discarded as it arrives, in bounded chunks;
- a raw ``Content-Length: N`` header line cannot occur inside a JSON body
  (JSON escapes CR and LF), so wherever one appears the sender started a new
  frame: junk before it (a body without header, the rest of a body whose
  length was too short, binary noise) is skipped, a declared body that runs
  into it was too long and ends there, and a header that is not a number,
  has no blank line after it or no body is dropped;
- everything skipped is logged (sizes and reasons, never the bytes); a
  request that can still be read from a broken frame gets one InvalidRequest
  reply (it is not run), bodies that are not JSON get a ParseError reply (id
  null), and JSON that is too deep to parse gets an error reply for the id
  of its top-level object, when it has one.

The message itself (batches, notifications sent with an id, ...) is checked
by :meth:`k1412_ls.lsp.protocol.K1412Protocol.receive`.
"""

from __future__ import annotations

import json
import logging
import re
import threading
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from pygls.protocol import JsonRPCProtocol

from k1412_ls.lsp import constants as c
from k1412_ls.lsp.byte_sources import ByteSource
from k1412_ls.lsp.pygls_private import send_raw

log = logging.getLogger(c.LOGGER_NAME)

MAX_FRAME_BYTES = c.MAX_FRAME_BYTES
# Longest header line kept; longer junk is skipped in pieces of this size.
LINE_LIMIT = 64 * 1024
CHUNK = 1024 * 1024
# A Content-Length header line, anywhere in the stream (values longer than 64 characters are junk).
_HEADER = re.compile(rb"Content-Length[ \t]{0,16}:[ \t]{0,16}([^\r\n]{0,64}?)[ \t]{0,16}\r?\n", re.IGNORECASE)
# What ends a body early: a header line with a numeric value. (In pretty-printed JSON a string holding
# "Content-Length: 5" can precede a raw newline, but then a quote always follows the digits.)
_FRAME_START = re.compile(rb"Content-Length[ \t]{0,16}:[ \t]{0,16}[0-9]{1,20}[ \t]{0,16}\r?\n", re.IGNORECASE)
# Any other header field line (Content-Type, ...).
_FIELD = re.compile(rb"[!#$%&'*+\-.^_`|~0-9A-Za-z]{1,128}[ \t]*:[^\r\n]*\r?\n")
_LENGTH = re.compile(rb"[0-9]{1,20}")
_PARTIAL_VALUE = re.compile(rb"[ \t]*(?::[ \t]*[0-9]*[ \t]*\r?)?")
# Bytes kept at the end of scanned junk: a header split across two reads must still be found.
_TAIL = 160
# Junk up to this size is kept to look for a request in it (to answer its id); larger junk is only counted.
RECOVER_LIMIT = 4 * 1024 * 1024


@dataclass
class Header:
    """A ``Content-Length`` header found in the stream, and the junk that came before it."""

    value: bytes | None  # None at the end of the input
    junk: bytes  # the skipped bytes, when all of them were kept (at most RECOVER_LIMIT)
    skipped: int  # how many bytes were skipped in all

    @property
    def kept_all(self) -> bool:
        return len(self.junk) == self.skipped


def find_header(buffer: bytes | bytearray, start: int = 0, end: int | None = None, *,
                strict: bool = False) -> re.Match[bytes] | None:
    """The first Content-Length header line in ``buffer[start:end]`` (``strict``: with a numeric
    value); lines are found with a fast search for their newline, since JSON bodies seldom hold one."""
    pattern = _FRAME_START if strict else _HEADER
    end = len(buffer) if end is None else min(end, len(buffer))
    pos = start
    while True:
        newline = buffer.find(b"\n", pos, end)
        if newline < 0:
            return None
        match = pattern.search(buffer, max(start, newline - 140), newline + 1)
        if match is not None:
            return match
        pos = newline + 1


class FrameReader:
    """Headers, bodies and bounded skipping over a :class:`ByteSource`, resynchronising on headers."""

    def __init__(self, source: ByteSource) -> None:
        self.source = source
        self.buffer = bytearray()
        self.eof = False

    def _take(self, size: int) -> bytes:
        data = bytes(self.buffer[:size])
        del self.buffer[:size]
        return data

    def push_back(self, data: bytes) -> None:
        self.buffer[:0] = data

    async def _fill(self) -> None:
        chunk = await self.source.read_some(CHUNK)
        if chunk:
            self.buffer += chunk
        else:
            self.eof = True

    def at_header(self) -> bool:
        """Whether the buffered bytes start with a Content-Length header (or are empty)."""
        return not self.buffer or _HEADER.match(self.buffer) is not None

    async def next_header(self) -> Header:
        """Skip to the next ``Content-Length`` header line, wherever it starts; consume it."""
        junk = bytearray()
        skipped = 0

        def drop(size: int) -> None:
            nonlocal skipped
            data = self._take(size)
            if len(junk) == skipped and skipped + len(data) <= RECOVER_LIMIT:
                junk.extend(data)
            skipped += len(data)

        while True:
            match = find_header(self.buffer)
            if match is not None:
                value, length = bytes(match.group(1)), match.end() - match.start()  # before the buffer changes
                drop(match.start())
                del self.buffer[:length]
                return Header(value, bytes(junk), skipped)
            if self.eof:
                drop(len(self.buffer))
                return Header(None, bytes(junk), skipped)
            if len(self.buffer) > _TAIL:
                drop(len(self.buffer) - _TAIL)
            await self._fill()

    async def readline(self) -> bytes:
        """One line (at most LINE_LIMIT bytes); b"" at EOF."""
        while True:
            end = self.buffer.find(b"\n", 0, LINE_LIMIT)
            if end >= 0:
                return self._take(end + 1)
            if len(self.buffer) >= LINE_LIMIT or self.eof:
                return self._take(LINE_LIMIT)
            await self._fill()

    async def header_block(self) -> str:
        """The rest of a header block: "ok" at its blank line, "restart" at another Content-Length,
        "broken" at a line that is no header field (pushed back), "eof" at the end of the input."""
        while True:
            line = await self.readline()
            if not line:
                return "eof"
            if line in (b"\r\n", b"\n"):
                return "ok"
            if _HEADER.fullmatch(line):
                self.push_back(line)
                return "restart"
            if _FIELD.fullmatch(line):
                continue  # Content-Type and other fields
            self.push_back(line)
            return "broken"

    async def body(self, size: int) -> tuple[bytes, bool]:
        """``(body, cut)``: ``size`` bytes, or fewer with ``cut`` when the next frame's header (or the
        end of the input) comes first."""
        scanned = 0
        while True:
            match = find_header(self.buffer, scanned, size + _TAIL, strict=True)
            if match is not None and match.start() < size:
                return self._take(match.start()), True
            if len(self.buffer) >= size and not self._header_under_way(size):
                return self._take(size), False
            if self.eof:
                return self._take(len(self.buffer)), True
            scanned = max(0, min(len(self.buffer), size) - _TAIL)
            await self._fill()

    def _header_under_way(self, size: int) -> bool:
        """Whether the buffer ends in the first part of a header line that starts inside the body."""
        if len(self.buffer) - size >= _TAIL:
            return False  # a header starting inside the body would have been found whole
        first = max(0, size - _TAIL)
        window = bytes(self.buffer[first:]).lower()
        start = window.find(b"c")
        while 0 <= start < size - first:
            if _partial_header(window[start:]):
                return True
            start = window.find(b"c", start + 1)
        return False

    async def skip(self, size: int) -> None:
        """Discard up to ``size`` body bytes, stopping early where the next frame's header starts."""
        remaining = size
        while remaining > 0:
            if not self.buffer:
                await self._fill()
                if self.eof:
                    return
            match = find_header(self.buffer, strict=True)
            if match is not None and match.start() < remaining:
                del self.buffer[:match.start()]
                return
            available = min(len(self.buffer), remaining)
            # Keep a short tail while more body is due: a header split across two reads must still be found.
            drop = available - (min(available, _TAIL) if available < remaining else 0)
            if drop == 0:
                await self._fill()
                if self.eof:
                    return
                continue
            del self.buffer[:drop]
            remaining -= drop


def _partial_header(fragment: bytes) -> bool:
    """Whether lower-case ``fragment`` is the beginning of a Content-Length header line."""
    name = b"content-length"
    if len(fragment) <= len(name):
        return name.startswith(fragment)
    return fragment.startswith(name) and _PARTIAL_VALUE.fullmatch(fragment, len(name)) is not None


# -- messages ----------------------------------------------------------------------------------

_TOKEN = re.compile(rb'"(?:[^"\\]|\\.)*"|[\[\]{}]')
_ID_VALUE = re.compile(rb'\s*:\s*(-?[0-9]{1,20}|"(?:[^"\\]|\\.){0,200}")')


def top_level_id(body: bytes) -> tuple[bool, Any]:
    """``(found, id)``: the ``"id"`` member of the top-level object of a body ``json`` cannot parse
    (too deep), found without recursion; ids nested below the top level do not count."""
    if not body.lstrip().startswith(b"{") or len(body) > RECOVER_LIMIT:
        return False, None
    depth = 0
    for token in _TOKEN.finditer(body):
        first = token.group()[:1]
        if first in (b"{", b"["):
            depth += 1
        elif first in (b"}", b"]"):
            depth -= 1
            if depth <= 0:
                return False, None
        elif depth == 1 and token.group() == b'"id"':
            value = _ID_VALUE.match(body, token.end())
            if value is not None:
                try:
                    return True, json.loads(value.group(1))
                except ValueError:
                    return False, None
    return False, None


def _error(protocol: JsonRPCProtocol, msg_id: Any, code: int, message: str) -> None:
    send_raw(protocol, {"jsonrpc": "2.0", "id": msg_id, "error": {"code": code, "message": message}})


def _receive(protocol: JsonRPCProtocol, message: Any) -> None:
    receive = getattr(protocol, "receive", None)
    try:
        if receive is not None:
            receive(message)
        else:
            protocol.handle_message(protocol.structure_message(message))
    except Exception:
        log.exception("could not handle a message")


def _dispatch(body: bytes, protocol: JsonRPCProtocol) -> bool:
    """Hand one framed body to the protocol; False when it is not JSON (after a ParseError reply)."""
    try:
        message = json.loads(body)
    except RecursionError:
        found, msg_id = top_level_id(body)
        log.warning("refused a message nested too deeply to read (%d bytes)", len(body))
        _error(protocol, msg_id if found else None, -32600,
               "The message nests too deeply to be read; it was not run, send flatter JSON.")
        return True
    except ValueError:
        log.warning("refused a message that is not valid JSON (%d bytes)", len(body))
        _error(protocol, None, -32700, "The message is not valid JSON; resend it.")
        return False
    _receive(protocol, message)
    return True


def _request_ids(message: Any) -> list[Any]:
    """The ids of the requests in a parsed message (or batch)."""
    items = message if isinstance(message, list) else [message]
    return [item["id"] for item in items if isinstance(item, dict) and "id" in item and "method" in item]


def _only_fields(junk: bytes) -> bool:
    """Whether ``junk`` is nothing but header field lines (no blank line ends them)."""
    rest = junk.lstrip(b"\r\n")
    while (match := _FIELD.match(rest)) is not None:
        rest = rest[match.end():]
    return not rest and bool(junk.strip())


def _strip_fields(junk: bytes) -> bytes:
    """Junk without a leading block of header fields (a frame whose Content-Length was missing)."""
    rest = junk.lstrip(b"\r\n")
    stripped = False
    while (match := _FIELD.match(rest)) is not None:
        rest = rest[match.end():]
        stripped = True
    if stripped and rest[:2] == b"\r\n":
        rest = rest[2:]
    elif stripped and rest[:1] == b"\n":
        rest = rest[1:]
    return rest


def _skipped(header: Header, carry: bytes | None, protocol: JsonRPCProtocol) -> None:
    """Log bytes that belonged to no frame; answer a request that can still be read from them."""
    junk = header.junk
    if header.kept_all:
        if not junk.strip() or _only_fields(junk):
            return  # blank lines between frames, or fields (Content-Type) before this frame's length
        text = _strip_fields(junk)
        candidates = [(text, "it had no Content-Length header")]
        if carry is not None:
            candidates.append((carry + junk, "its Content-Length was too short"))
        for candidate, why in candidates:
            if not candidate.strip():
                continue
            try:
                message = json.loads(candidate)
            except (ValueError, RecursionError):
                continue
            ids = _request_ids(message)
            log.warning("skipped %d bytes outside any frame: a message framed wrongly (%s); answered %d "
                        "request id(s) with an error", header.skipped, why, len(ids))
            for msg_id in ids:
                _error(protocol, msg_id, -32600,
                       f"The message was framed wrongly ({why}); it was not run, resend it with an exact "
                       f"Content-Length header.")
            return
        if not text.strip():
            log.warning("skipped %d bytes of header fields without a Content-Length", header.skipped)
            return
    log.warning("skipped %d bytes that belong to no frame (no Content-Length header before them)", header.skipped)


def _misframed(body: bytes, declared: int, protocol: JsonRPCProtocol) -> None:
    """A body cut short by the next frame's header (or the end of the input): log it, answer its id."""
    if not body.strip():
        log.warning("skipped a frame header declaring %d bytes with no body after it", declared)
        return
    try:
        message = json.loads(body)
    except (ValueError, RecursionError):
        log.warning("skipped a %d-byte body whose Content-Length said %d (the next frame started inside it)",
                    len(body), declared)
        return
    ids = _request_ids(message)
    log.warning("skipped a %d-byte message whose Content-Length said %d; answered %d request id(s) with an error",
                len(body), declared, len(ids))
    for msg_id in ids:
        _error(protocol, msg_id, -32600,
               f"The message was framed wrongly (its Content-Length said {declared} bytes, it had {len(body)}); "
               f"it was not run, resend it with an exact Content-Length header.")


async def serve_frames(source: ByteSource, protocol: JsonRPCProtocol, stop: threading.Event, *,
                       max_frame: int = MAX_FRAME_BYTES,
                       on_oversize: Callable[[int], Any] | None = None) -> None:
    """Read framed messages until EOF or ``stop``; hand each to ``protocol``; resynchronise after junk."""
    reader = FrameReader(source)
    carry: bytes | None = None  # a body that was not JSON, with more bytes right after it
    while not stop.is_set():
        header = await reader.next_header()
        if header.skipped:
            _skipped(header, carry, protocol)
        carry = None
        if header.value is None:
            break
        value = header.value.strip()
        status = await reader.header_block()
        if status == "eof":
            log.warning("skipped a frame header at the end of the input")
            break
        if status == "restart":
            log.warning("skipped a Content-Length header followed by another one")
            continue
        if _LENGTH.fullmatch(value) is None:
            log.warning("skipped a frame whose Content-Length is not a byte count (%d characters)", len(value))
            continue  # its body, if any, is skipped up to the next header
        if status == "broken":
            log.warning("skipped a Content-Length header not followed by a blank line")
            continue
        size = int(value)
        if size > max_frame:
            log.error("refused a %d-byte message (limit %d bytes)", size, max_frame)
            if on_oversize is not None:
                on_oversize(size)
            await reader.skip(size)
            continue
        body, cut = await reader.body(size)
        if cut:
            _misframed(body, size, protocol)
            continue
        if not body:
            log.warning("skipped a frame with an empty body")
            continue
        if not _dispatch(body, protocol) and not reader.at_header():
            carry = body
