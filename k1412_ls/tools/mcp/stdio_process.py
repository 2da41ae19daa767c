"""A stdio MCP server's process, and the transport the SDK's session runs over it.

The process is started like a model command (``tools.sandbox.confinement``: the run's bubblewrap sandbox
and system-call filter, the trusted launcher with its resource limits and pids cgroup), with the network
its entry allows, in the workspace, with only the environment its entry names. ``sandbox = false`` in the
user's entry starts it on the host instead; its label says so. Its stdout carries newline-delimited
JSON-RPC: a line longer than :data:`MAX_MESSAGE_BYTES` is discarded, and when it was an answer, the request
it answered gets an error instead; a line that is not JSON-RPC is dropped. Its stderr is kept (the tail) for
the one sentence said when it dies. :meth:`ServerProcess.stop` closes stdin, waits briefly, then kills the
whole process group and reaps it.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import math
import os
import re
import signal
import subprocess
import threading
from collections import deque
from collections.abc import AsyncIterator, Callable, Mapping, Sequence
from pathlib import Path

import anyio
import mcp_types
from mcp.shared.message import SessionMessage
from mcp_types.methods import validate_server_result

from k1412_ls.limits import LIMITS
from k1412_ls.tools.errors import ToolError
from k1412_ls.tools.sandbox.command_sandbox import RunSandbox
from k1412_ls.tools.sandbox.confinement import confined_argv
from k1412_ls.tools.sandbox.launcher import launcher
from k1412_ls.tools.sandbox.process_cap import ProcessCap

log = logging.getLogger("k1412.mcp")

MAX_MESSAGE_BYTES = 8 * 1024 * 1024
STDERR_TAIL_BYTES = 4096
STOP_GRACE_S = 0.5
READ_CHUNK = 64 * 1024
UNSANDBOXED_BY_ENTRY = "unsandboxed (the user's MCP entry says sandbox = false)"
_ID = re.compile(rb'"id"\s*:\s*("(?:[^"\\]|\\.){0,200}"|-?\d{1,20})')


class ServerProcess:
    """One started server: its pipes, its sandbox label, the tail of its stderr; stop() reaps it."""

    def __init__(self, popen: subprocess.Popen[bytes], label: str, cap: ProcessCap,
                 release: Callable[[], None] | None) -> None:
        self.popen = popen
        self.label = label
        self._cap = cap
        self._release = release
        self._stderr: deque[bytes] = deque()
        self._stderr_size = 0
        self._lock = threading.Lock()
        self._stopped = False
        self.dropped_lines = 0
        self.oversize_lines = 0
        self.listing_ids: set[object] = set()  # ids of our tools/list requests still unanswered
        self.dropped_tools: list[str] = []
        self.protocol = mcp_types.LATEST_PROTOCOL_VERSION  # the version initialize agreed on, once seen
        self._stderr_thread = threading.Thread(target=self._drain_stderr, name=f"k1412-mcp-stderr-{popen.pid}",
                                               daemon=True)
        self._stderr_thread.start()

    def _drain_stderr(self) -> None:
        assert self.popen.stderr is not None
        fd = self.popen.stderr.fileno()
        while True:
            try:
                chunk = os.read(fd, READ_CHUNK)
            except OSError:
                return
            if not chunk:
                return
            with self._lock:
                self._stderr.append(chunk)
                self._stderr_size += len(chunk)
                while self._stderr_size > STDERR_TAIL_BYTES and len(self._stderr) > 1:
                    self._stderr_size -= len(self._stderr.popleft())

    def stderr_tail(self, limit: int = 300) -> str:
        """The last line or so the server wrote to stderr (for the sentence about its end)."""
        with self._lock:
            text = b"".join(self._stderr).decode("utf-8", "replace")
        lines = [line.strip() for line in text.splitlines() if line.strip()]
        return lines[-1][-limit:] if lines else ""

    def exit_code(self) -> int | None:
        return self.popen.poll()

    def settle(self, timeout_s: float = 1.0) -> int | None:
        """Its exit code once it has ended (waiting up to ``timeout_s``), its stderr read to the end; else None."""
        try:
            code = self.popen.wait(timeout_s)
        except subprocess.TimeoutExpired:
            return None
        self._stderr_thread.join(timeout_s)
        return code

    def stop(self) -> None:
        """Close stdin, give it a moment, then kill its whole group (a sandboxed one has no other way) and reap."""
        with self._lock:
            if self._stopped:
                return
            self._stopped = True
        with contextlib.suppress(OSError):
            if self.popen.stdin is not None:
                self.popen.stdin.close()
        try:
            self.popen.wait(STOP_GRACE_S)
        except subprocess.TimeoutExpired:
            pass
        with contextlib.suppress(OSError):
            os.killpg(self.popen.pid, signal.SIGKILL)
        with contextlib.suppress(subprocess.TimeoutExpired):
            self.popen.wait(5)
        self._cap.kill_all()
        self._cap.close()
        for pipe in (self.popen.stdout, self.popen.stderr):
            with contextlib.suppress(OSError):
                if pipe is not None:
                    pipe.close()
        if self._release is not None:
            self._release()
            self._release = None


def start_server(argv: Sequence[str], cwd: Path, env: Mapping[str, str], *, sandbox: RunSandbox | None,
                 workspace: Path, network: bool) -> ServerProcess:
    """Start ``argv`` with pipes on stdin, stdout and stderr: in ``sandbox`` (None: on the host, the user's choice).

    Raises :class:`ToolError` (one sentence) when it cannot be confined as the policy says or cannot start.
    """
    full = list(argv)
    child_env = dict(env)
    label = UNSANDBOXED_BY_ENTRY
    release: Callable[[], None] | None = None
    fds: tuple[int, ...] = ()
    if sandbox is not None:
        confined = confined_argv(full, sandbox, workspace, cwd, network)
        full, label, release, fds = confined.argv, confined.label, confined.release, confined.fds
        child_env.update(confined.env)
    cap = ProcessCap(sandbox.policy.max_processes if sandbox is not None else LIMITS.max_processes)
    procs = cap.prepare()
    full, preexec = launcher(full, procs)
    if preexec is not None and procs is not None:
        cap.abandon()
    try:
        popen = subprocess.Popen(full, cwd=cwd, env=child_env, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                 stderr=subprocess.PIPE, start_new_session=True, close_fds=True, preexec_fn=preexec,
                                 pass_fds=fds, bufsize=0)
    except OSError as exc:
        cap.close()
        if release is not None:
            release()
        raise ToolError(f"could not be started ({exc.strerror or type(exc).__name__})") from None
    finally:
        for fd in fds:
            with contextlib.suppress(OSError):
                os.close(fd)
    process = ServerProcess(popen, label, cap, release)
    cap.start(popen.pid, on_trip=lambda: _kill_group(popen.pid))
    return process


def _kill_group(pid: int) -> None:
    with contextlib.suppress(OSError):
        os.killpg(pid, signal.SIGKILL)


def _oversize_error(head: bytes, tail: bytes, size: int) -> SessionMessage | None:
    """An error answer for the request an oversize line answered (its id found at either end), else None."""
    match = _ID.search(head) or _ID.search(tail)
    if match is None:
        return None
    raw = match.group(1)
    ident: int | str = int(raw) if not raw.startswith(b'"') else raw[1:-1].decode("utf-8", "replace")
    message = (f"The server's answer was {size} bytes, over K1412's limit of {MAX_MESSAGE_BYTES} bytes for one "
               "message, and was discarded; ask for less (a narrower query, a smaller range).")
    error = mcp_types.JSONRPCError(jsonrpc="2.0", id=ident, error=mcp_types.ErrorData(code=-32603, message=message))
    return SessionMessage(error)


def _parse(line: bytes) -> SessionMessage | None:
    try:
        return SessionMessage(mcp_types.jsonrpc_message_adapter.validate_json(line, by_name=False))
    except ValueError:
        return None


def _without_invalid_tools(process: ServerProcess, message: SessionMessage) -> SessionMessage:
    """A tools/list answer without the tools the SDK would reject (one bad schema must not cost the others)."""
    root = message.message
    if isinstance(root, mcp_types.JSONRPCResponse) and isinstance(root.result, dict) \
            and isinstance(root.result.get("protocolVersion"), str):
        process.protocol = root.result["protocolVersion"]
    if not isinstance(root, mcp_types.JSONRPCResponse) or root.id not in process.listing_ids:
        return message
    process.listing_ids.discard(root.id)
    result = root.result if isinstance(root.result, dict) else {}
    tools = result.get("tools")
    if not isinstance(tools, list):
        return message
    kept = []
    for tool in tools:
        try:
            validate_server_result("tools/list", process.protocol, {"tools": [tool]})
        except (ValueError, KeyError) as exc:
            name = str(tool.get("name") if isinstance(tool, dict) else "?")[:80]
            first = str(exc).splitlines()[1:3]
            log.warning("MCP tool '%s' left out: the server's definition is invalid (%s)", name, "; ".join(first))
            process.dropped_tools.append(name)
            continue
        kept.append(tool)
    if len(kept) == len(tools):
        return message
    fixed = root.model_copy(update={"result": {**result, "tools": kept}})
    return SessionMessage(fixed, message.metadata)


def _read_stdout(process: ServerProcess, deliver: Callable[[SessionMessage | None], None]) -> None:
    """The reader thread: whole lines to ``deliver``, oversize ones answered with an error; None at the end."""
    assert process.popen.stdout is not None
    fd = process.popen.stdout.fileno()
    buffer = bytearray()
    oversize = False
    head = b""
    tail = b""
    size = 0
    while True:
        try:
            chunk = os.read(fd, READ_CHUNK)
        except OSError:
            chunk = b""
        if not chunk:
            deliver(None)
            return
        while chunk:
            newline = chunk.find(b"\n")
            piece, chunk = (chunk, b"") if newline < 0 else (chunk[:newline], chunk[newline + 1:])
            if oversize:
                size += len(piece)
                tail = (tail + piece)[-512:]
            else:
                buffer += piece
                if len(buffer) > MAX_MESSAGE_BYTES:
                    oversize, head, tail, size = True, bytes(buffer[:512]), bytes(buffer[-512:]), len(buffer)
                    buffer.clear()
            if newline < 0:
                continue
            if oversize:
                process.oversize_lines += 1
                log.warning("an MCP server sent a %d-byte message; it was discarded", size)
                answer = _oversize_error(head, tail, size)
                if answer is not None:
                    deliver(answer)
                oversize, size = False, 0
                continue
            line = bytes(buffer).strip()
            buffer.clear()
            if not line:
                continue
            message = _parse(line)
            if message is None:
                process.dropped_lines += 1  # not JSON-RPC (a stray print): never read as anything
                continue
            deliver(_without_invalid_tools(process, message))


@contextlib.asynccontextmanager
async def stdio_streams(process: ServerProcess) -> AsyncIterator[tuple[object, object]]:
    """The read and write streams a :class:`mcp.client.session.ClientSession` runs over, bridged to the pipes."""
    loop = asyncio.get_running_loop()
    read_send, read_receive = anyio.create_memory_object_stream[SessionMessage | Exception](math.inf)
    write_send, write_receive = anyio.create_memory_object_stream[SessionMessage](math.inf)

    def deliver(message: SessionMessage | None) -> None:
        def put() -> None:
            with contextlib.suppress(anyio.ClosedResourceError, anyio.BrokenResourceError):
                if message is None:
                    read_send.close()
                else:
                    read_send.send_nowait(message)
        with contextlib.suppress(RuntimeError):  # the loop is gone: nobody reads any more
            loop.call_soon_threadsafe(put)

    threading.Thread(target=_read_stdout, args=(process, deliver), name=f"k1412-mcp-out-{process.popen.pid}",
                     daemon=True).start()

    def write(data: bytes) -> None:
        assert process.popen.stdin is not None
        process.popen.stdin.write(data)

    async def writer() -> None:
        async with write_receive:
            async for message in write_receive:
                request = message.message
                if isinstance(request, mcp_types.JSONRPCRequest) and request.method == "tools/list":
                    process.listing_ids.add(request.id)
                data = message.message.model_dump_json(by_alias=True, exclude_unset=True).encode() + b"\n"
                try:
                    await anyio.to_thread.run_sync(write, data)
                except (OSError, ValueError):
                    read_send.close()
                    return

    task = asyncio.ensure_future(writer())
    try:
        yield read_receive, write_send
    finally:
        task.cancel()
        write_send.close()
        read_send.close()
        with contextlib.suppress(BaseException):
            await task


__all__ = ["MAX_MESSAGE_BYTES", "UNSANDBOXED_BY_ENTRY", "ServerProcess", "start_server", "stdio_streams"]
