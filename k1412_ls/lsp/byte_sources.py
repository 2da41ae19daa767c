"""Where framed LSP bytes come from: the server's stdin (a reader thread) or a TCP stream.

Both answer the same two requests — "up to N bytes" and "exactly N bytes" —
so :class:`k1412_ls.lsp.transport.FrameReader` reads stdio and TCP alike.
"""

from __future__ import annotations

import asyncio
import queue
import threading
from typing import IO, Protocol


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


__all__ = ["ByteSource", "StdioSource", "StreamSource"]
