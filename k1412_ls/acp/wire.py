"""The ACP wire on stdio: newline-delimited JSON-RPC messages, checked before the SDK sees them.

A :class:`StdioTransport` is the SDK's message-level transport (``send``/``receive``/``close``). Its pump
reads stdin from the moment the process starts and answers what the SDK would otherwise drop or
mishandle: a line that is not JSON gets a ``-32700`` error, a line that is not a request, notification
or response object gets ``-32600``, a message over :data:`MAX_MESSAGE_BYTES` is refused unread. Until
the SDK is ready, ``initialize`` is answered here (``capabilities.initialize_reply``) so the client is
not kept waiting for imports. Standard library only.
"""

from __future__ import annotations

import asyncio
import json
import logging
import sys
from collections.abc import Callable
from typing import Any

log = logging.getLogger("k1412.acp")

MAX_MESSAGE_BYTES = 64 * 1024 * 1024
_READ_CHUNK = 1 << 16

InitializeHandler = Callable[[Any], dict[str, Any]]


def error_reply(request_id: Any, code: int, message: str) -> dict[str, Any]:
    return {"jsonrpc": "2.0", "id": request_id, "error": {"code": code, "message": message}}


def encode(message: dict[str, Any]) -> bytes:
    """One line of UTF-8 JSON; text that cannot be UTF-8 (a lone surrogate) goes as ``\\u`` escapes."""
    try:
        return (json.dumps(message, ensure_ascii=False, separators=(",", ":")) + "\n").encode("utf-8")
    except UnicodeEncodeError:
        return (json.dumps(message, ensure_ascii=True, separators=(",", ":")) + "\n").encode("ascii")


def check_message(message: Any) -> str | None:
    """Why ``message`` is not a JSON-RPC request, notification or response (None: it is one)."""
    if not isinstance(message, dict):
        return "a JSON-RPC message must be a JSON object"
    if "method" in message:
        if not isinstance(message["method"], str) or not message["method"]:
            return "the method must be a non-empty string"
        if "params" in message and message["params"] is not None and not isinstance(message["params"], dict | list):
            return "params must be an object"
    elif "id" not in message or not ("result" in message or "error" in message):
        return "the message has neither a method nor a result or error for an id"
    if "id" in message and (isinstance(message["id"], bool) or not isinstance(message["id"], str | int | None)):
        return "the id must be a string, a number or null"
    return None


def explain_error(message: dict[str, Any]) -> dict[str, Any]:
    """The SDK's bare error replies, made one sentence: which parameter is wrong, which method is unknown.

    Validation details keep where and what (``loc``, ``msg``) but not the offending input, which may be a
    whole prompt or file.
    """
    error = message.get("error")
    if not isinstance(error, dict):
        return message
    data = error.get("data")
    if error.get("code") == -32602 and error.get("message") == "Invalid params" and isinstance(data, dict) \
            and isinstance(data.get("errors"), list):
        problems = [e for e in data["errors"] if isinstance(e, dict)]
        said = "; ".join(f"{'.'.join(str(part) for part in e.get('loc', ())) or 'params'}: {e.get('msg', 'invalid')}"
                         for e in problems[:3])
        more = f" (and {len(problems) - 3} more)" if len(problems) > 3 else ""
        errors = [{"loc": e.get("loc"), "msg": e.get("msg"), "type": e.get("type")} for e in problems]
        return {**message, "error": {**error, "message": f"Invalid params: {said}{more}.", "data": {"errors": errors}}}
    if error.get("code") == -32601 and error.get("message") == "Method not found" and isinstance(data, dict):
        method = str(data.get("method", ""))[:200]
        return {**message, "error": {**error, "message": f"Method not found: K1412 does not implement {method!r}."}}
    return message


class StdioTransport:
    """Messages in from a byte reader, out to a byte writer; parse and shape errors answered here."""

    def __init__(self, reader: asyncio.StreamReader, write: Callable[[bytes], Any],
                 on_initialize: InitializeHandler | None = None) -> None:
        self._reader = reader
        self._write = write
        self._inbox: asyncio.Queue[dict[str, Any] | None] = asyncio.Queue()
        self._write_lock = asyncio.Lock()
        self.on_initialize = on_initialize  # answers initialize until the SDK is ready (then None)
        self._closed = False
        self._pump = asyncio.get_running_loop().create_task(self._read_all(), name="k1412-acp-read")

    # -- the SDK's Transport protocol ------------------------------------------------------------
    async def send(self, message: dict[str, Any]) -> None:
        if self._closed:
            raise ConnectionError("the client connection is closed")
        data = encode(explain_error(message))
        async with self._write_lock:
            result = self._write(data)
            if asyncio.iscoroutine(result):
                await result

    async def receive(self) -> dict[str, Any] | None:
        return await self._inbox.get()

    async def close(self) -> None:
        self._closed = True
        self._pump.cancel()

    # -- the pump ----------------------------------------------------------------------------
    async def _read_all(self) -> None:
        try:
            while True:
                line = await self._read_line()
                if line is None:
                    break
                await self._take(line)
        except asyncio.CancelledError:
            pass
        except Exception:
            log.exception("reading the client's messages failed")
        finally:
            self._inbox.put_nowait(None)

    async def _read_line(self) -> bytes | None:
        """The next line; an over-long one is skipped (and answered), None at the end of input."""
        try:
            return await self._reader.readuntil(b"\n")
        except asyncio.IncompleteReadError as exc:
            return exc.partial or None
        except asyncio.LimitOverrunError as exc:
            size = exc.consumed
            await self._reader.readexactly(exc.consumed)
            while True:  # discard the rest of the line
                try:
                    rest = await self._reader.readuntil(b"\n")
                    size += len(rest)
                    break
                except asyncio.LimitOverrunError as more:
                    size += more.consumed
                    await self._reader.readexactly(more.consumed)
                except asyncio.IncompleteReadError:
                    break
            await self._reply(error_reply(None, -32600, f"K1412 refused a message of {size} bytes or more (the "
                                                        f"limit is {MAX_MESSAGE_BYTES} bytes); send smaller messages."))
            return b""

    async def _take(self, line: bytes) -> None:
        text = line.strip()
        if not text:
            return
        try:
            message = json.loads(text)
        except (ValueError, UnicodeDecodeError):
            await self._reply(error_reply(None, -32700, "Parse error: the line is not valid JSON; send one "
                                                        "JSON-RPC message per line."))
            return
        problem = check_message(message)
        if problem is not None:
            request_id = message.get("id") if isinstance(message, dict) else None
            if isinstance(request_id, bool) or not isinstance(request_id, str | int | None):
                request_id = None
            await self._reply(error_reply(request_id, -32600, f"Invalid request: {problem}."))
            return
        if self.on_initialize is not None and message.get("method") == "initialize" and "id" in message:
            await self._answer_initialize(message)
            return
        self._inbox.put_nowait(message)

    async def _answer_initialize(self, message: dict[str, Any]) -> None:
        from k1412_ls.acp.capabilities import is_valid_initialize

        handler = self.on_initialize
        assert handler is not None
        params = message.get("params")
        if not is_valid_initialize(params):
            await self._reply(error_reply(message["id"], -32602, "Invalid params: initialize needs an integer "
                                                                  "protocolVersion."))
            return
        await self._reply({"jsonrpc": "2.0", "id": message["id"], "result": handler(params)})

    async def _reply(self, message: dict[str, Any]) -> None:
        try:
            await self.send(message)
        except (ConnectionError, OSError):
            log.warning("could not answer the client: the connection is gone")


async def stdio_transport(on_initialize: InitializeHandler | None) -> StdioTransport:
    """A transport over this process's stdin and stdout."""
    loop = asyncio.get_running_loop()
    reader = asyncio.StreamReader(limit=MAX_MESSAGE_BYTES)
    try:
        await loop.connect_read_pipe(lambda: asyncio.StreamReaderProtocol(reader), sys.stdin)
    except ValueError:  # a regular file on stdin: read it in a thread
        _feed_from_thread(loop, reader)
    try:
        pipe, protocol = await loop.connect_write_pipe(asyncio.streams.FlowControlMixin, sys.stdout)
    except ValueError:  # a regular file on stdout: plain blocking writes
        stdout = sys.stdout.buffer

        def write_file(data: bytes) -> None:
            stdout.write(data)
            stdout.flush()

        return StdioTransport(reader, write_file, on_initialize)
    writer = asyncio.StreamWriter(pipe, protocol, None, loop)

    async def write(data: bytes) -> None:
        writer.write(data)
        await writer.drain()

    return StdioTransport(reader, write, on_initialize)


def _feed_from_thread(loop: asyncio.AbstractEventLoop, reader: asyncio.StreamReader) -> None:
    import threading

    def pump() -> None:
        try:
            while chunk := sys.stdin.buffer.read1(_READ_CHUNK):
                loop.call_soon_threadsafe(reader.feed_data, chunk)
        finally:
            loop.call_soon_threadsafe(reader.feed_eof)

    threading.Thread(target=pump, name="k1412-acp-stdin", daemon=True).start()
