"""Message framing with a size cap, for stdio and TCP.

pygls 2.1.1 trusts ``Content-Length``: 99999999999999 ends in MemoryError and
2000000000 waits forever for bytes that never come. Here a frame over
:data:`MAX_FRAME_BYTES` is refused (the client is told) and its body is
discarded as it arrives, in bounded chunks, without waiting for bytes that
may never come: a raw ``Content-Length: N\\r\\n`` header cannot occur inside a
JSON body (JSON escapes CR and LF), so seeing one means the sender started
its next frame and reading resumes there. Bodies that are not JSON get a
ParseError reply (id null) instead of silence.
"""

from __future__ import annotations

import asyncio
import json
import logging
import queue
import re
import threading
from collections.abc import Callable
from typing import IO, Any, Protocol

from pygls.protocol import JsonRPCProtocol

from k1412_ls.lsp import constants as c

log = logging.getLogger(c.LOGGER_NAME)

MAX_FRAME_BYTES = c.MAX_FRAME_BYTES
# Longest header line kept; longer junk is handed out in pieces of this size.
LINE_LIMIT = 64 * 1024
CHUNK = 1024 * 1024
_CONTENT_LENGTH = re.compile(rb"^Content-Length: *(\d+)\r?\n$", re.IGNORECASE)
_NEXT_FRAME = re.compile(rb"Content-Length: *\d+\r\n", re.IGNORECASE)


class ByteSource(Protocol):
    """A byte stream: ``read_some`` returns what is available (b"" at EOF), ``read_exact`` waits for all."""

    async def read_some(self, size: int) -> bytes: ...

    async def read_exact(self, size: int) -> bytes: ...


class StdioSource:
    """Blocking stdin reads in one daemon thread, so the event loop never blocks.

    A daemon thread (not an executor worker) because a read blocked on a
    silent client must not keep the process alive after ``exit``.
    """

    def __init__(self, stream: IO[bytes]) -> None:
        self.stream = stream
        self._requests: queue.SimpleQueue[tuple[int, bool, asyncio.Future[bytes]] | None] = queue.SimpleQueue()
        self._thread: threading.Thread | None = None

    def _serve(self) -> None:
        while (item := self._requests.get()) is not None:
            size, exact, future = item
            try:
                data = self.stream.read(size) if exact else self.stream.read1(size)  # type: ignore[attr-defined]
            except (OSError, ValueError):
                data = b""
            future.get_loop().call_soon_threadsafe(_resolve, future, data)

    def _submit(self, size: int, exact: bool) -> asyncio.Future[bytes]:
        if self._thread is None:
            self._thread = threading.Thread(target=self._serve, name="k1412-stdin", daemon=True)
            self._thread.start()
        future: asyncio.Future[bytes] = asyncio.get_running_loop().create_future()
        self._requests.put((size, exact, future))
        return future

    async def read_some(self, size: int) -> bytes:
        return await self._submit(size, False)

    async def read_exact(self, size: int) -> bytes:
        return await self._submit(size, True)


def _resolve(future: asyncio.Future[bytes], data: bytes) -> None:
    if not future.done():
        future.set_result(data)


class StreamSource:
    """An asyncio StreamReader (TCP)."""

    def __init__(self, reader: asyncio.StreamReader) -> None:
        self.reader = reader

    async def read_some(self, size: int) -> bytes:
        return await self.reader.read(size)

    async def read_exact(self, size: int) -> bytes:
        try:
            return await self.reader.readexactly(size)
        except asyncio.IncompleteReadError as exc:
            return exc.partial


class FrameReader:
    """Header lines, bodies and bounded skipping over a :class:`ByteSource`."""

    def __init__(self, source: ByteSource) -> None:
        self.source = source
        self.buffer = bytearray()
        self.eof = False

    def _take(self, size: int) -> bytes:
        data = bytes(self.buffer[:size])
        del self.buffer[:size]
        return data

    async def _fill(self) -> None:
        chunk = await self.source.read_some(CHUNK)
        if chunk:
            self.buffer += chunk
        else:
            self.eof = True

    async def readline(self) -> bytes:
        """One line (at most LINE_LIMIT bytes); b"" at EOF."""
        while True:
            end = self.buffer.find(b"\n", 0, LINE_LIMIT)
            if end >= 0:
                return self._take(end + 1)
            if len(self.buffer) >= LINE_LIMIT or self.eof:
                return self._take(LINE_LIMIT)
            await self._fill()

    async def readexactly(self, size: int) -> bytes:
        """``size`` bytes, or fewer at EOF."""
        data = self._take(size)
        if len(data) < size and not self.eof:
            data += await self.source.read_exact(size - len(data))
        return data

    async def skip(self, size: int) -> None:
        """Discard up to ``size`` body bytes, stopping early where the next frame's header starts."""
        remaining = size
        while remaining > 0:
            if not self.buffer:
                await self._fill()
                if self.eof:
                    return
            match = _NEXT_FRAME.search(self.buffer)
            if match is not None and match.start() < remaining:
                del self.buffer[:match.start()]
                return
            available = min(len(self.buffer), remaining)
            # Keep a short tail while more body is due: a header split across two reads must still be found.
            drop = available - (min(available, 40) if available < remaining else 0)
            if drop == 0:
                await self._fill()
                if self.eof:
                    return
                continue
            del self.buffer[:drop]
            remaining -= drop


def _dispatch(body: bytes, protocol: JsonRPCProtocol) -> None:
    try:
        message = json.loads(body, object_hook=protocol.structure_message)
    except ValueError:
        log.warning("refused a message that is not valid JSON (%d bytes)", len(body))
        protocol._send_data({"jsonrpc": "2.0", "id": None,
                             "error": {"code": -32700, "message": "The message is not valid JSON; resend it."}})
        return
    except Exception:
        log.exception("could not decode a message")
        return
    try:
        protocol.handle_message(message)
    except Exception:
        log.exception("could not handle a message")


async def serve_frames(source: ByteSource, protocol: JsonRPCProtocol, stop: threading.Event, *,
                       max_frame: int = MAX_FRAME_BYTES,
                       on_oversize: Callable[[int], Any] | None = None) -> None:
    """Read framed messages until EOF or ``stop``; hand each to ``protocol``."""
    reader = FrameReader(source)
    content_length = 0
    oversized = 0
    while not stop.is_set():
        line = await reader.readline()
        if not line:
            break
        if not content_length and not oversized:
            match = _CONTENT_LENGTH.match(line)
            if match:
                size = int(match.group(1))
                if size > max_frame:
                    log.error("refused a %d-byte message (limit %d bytes)", size, max_frame)
                    if on_oversize is not None:
                        on_oversize(size)
                    oversized = size
                else:
                    content_length = size
            continue
        if line.strip():
            continue  # another header, e.g. Content-Type
        if oversized:
            await reader.skip(oversized)
            oversized = 0
            continue
        body = await reader.readexactly(content_length)
        expected, content_length = content_length, 0
        if len(body) < expected:
            break  # EOF in the middle of a message
        _dispatch(body, protocol)
