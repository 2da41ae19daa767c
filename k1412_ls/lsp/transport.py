"""Message framing with a size cap, for stdio and TCP.

pygls 2.1.1 trusts ``Content-Length``: 99999999999999 ends in MemoryError and
2000000000 waits forever for bytes that never come. Here a frame over
:data:`MAX_FRAME_BYTES` is refused (the client is told once per frame) and its
body is skipped as unparseable header lines, read in bounded chunks, until the
next ``Content-Length`` header resynchronises the stream. Bodies that are not
JSON get a ParseError reply (id null) instead of silence.
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

log = logging.getLogger("k1412.lsp")

MAX_FRAME_BYTES = c.MAX_FRAME_BYTES
# Longest header (or skipped junk) line read at once; bounds memory while resynchronising.
LINE_LIMIT = 1024 * 1024
_CONTENT_LENGTH = re.compile(rb"^Content-Length: *(\d+)\r?\n$", re.IGNORECASE)


class FrameReader(Protocol):
    """What the frame loop needs from a byte stream."""

    async def readline(self) -> bytes: ...

    async def readexactly(self, size: int) -> bytes: ...


class StdioReader:
    """Blocking stdin reads in one daemon thread, so the event loop never blocks.

    A daemon thread (not an executor worker) because a read blocked on a
    silent client must not keep the process alive after ``exit``.
    """

    def __init__(self, stream: IO[bytes]) -> None:
        self.stream = stream
        self._requests: queue.SimpleQueue[tuple[int, asyncio.Future[bytes]] | None] = queue.SimpleQueue()
        self._thread: threading.Thread | None = None

    def _serve(self) -> None:
        while (item := self._requests.get()) is not None:
            size, future = item
            loop = future.get_loop()
            try:
                data = self.stream.readline(LINE_LIMIT) if size < 0 else self.stream.read(size)
            except (OSError, ValueError):
                data = b""
            loop.call_soon_threadsafe(_resolve, future, data)

    def _submit(self, size: int) -> asyncio.Future[bytes]:
        if self._thread is None:
            self._thread = threading.Thread(target=self._serve, name="k1412-stdin", daemon=True)
            self._thread.start()
        future: asyncio.Future[bytes] = asyncio.get_running_loop().create_future()
        self._requests.put((size, future))
        return future

    async def readline(self) -> bytes:
        return await self._submit(-1)

    async def readexactly(self, size: int) -> bytes:
        return await self._submit(size)


def _resolve(future: asyncio.Future[bytes], data: bytes) -> None:
    if not future.done():
        future.set_result(data)


class StreamReaderAdapter:
    """An asyncio StreamReader (TCP) with bounded lines and EOF as short reads."""

    def __init__(self, reader: asyncio.StreamReader) -> None:
        self.reader = reader

    async def readline(self) -> bytes:
        try:
            return await self.reader.readuntil(b"\n")
        except asyncio.IncompleteReadError as exc:
            return exc.partial
        except asyncio.LimitOverrunError as exc:
            return await self.reader.read(max(1, exc.consumed))

    async def readexactly(self, size: int) -> bytes:
        try:
            return await self.reader.readexactly(size)
        except asyncio.IncompleteReadError as exc:
            return exc.partial


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


async def serve_frames(reader: FrameReader, protocol: JsonRPCProtocol, stop: threading.Event, *,
                       max_frame: int = MAX_FRAME_BYTES,
                       on_oversize: Callable[[int], Any] | None = None) -> None:
    """Read framed messages until EOF or ``stop``; hand each to ``protocol``."""
    content_length = 0
    while not stop.is_set():
        line = await reader.readline()
        if not line:
            break
        if not content_length:
            match = _CONTENT_LENGTH.match(line)
            if match:
                size = int(match.group(1))
                if size > max_frame:
                    log.error("refused a %d-byte message (limit %d bytes)", size, max_frame)
                    if on_oversize is not None:
                        on_oversize(size)
                else:
                    content_length = size
            continue
        if line.strip():
            continue  # another header, e.g. Content-Type
        body = await reader.readexactly(content_length)
        expected, content_length = content_length, 0
        if len(body) < expected:
            break  # EOF in the middle of a message
        _dispatch(body, protocol)
