"""A scripted OpenAI-compatible chat server for tests and demos.

It speaks ``POST /v1/chat/completions`` (plain JSON, or SSE when the request
says ``stream: true``) and ``GET /v1/models`` on 127.0.0.1, and answers each
chat request with the next step of a SCRIPT (a list of dicts):

* ``{"content": "text"}`` — a final answer (``finish_reason`` "stop");
* ``{"tool_calls": [{"name": "write_file", "arguments": {...}}], "content": "..."}``
  — ids default to ``call_<n>``; ``arguments`` may be a dict (JSON-encoded) or
  a raw string (to send invalid JSON);
* ``{"reasoning_content": "..."}`` (DeepSeek) or ``{"reasoning": "..."}``
  (some local servers) combined with the above;
* ``{"finish_reason": "length"}``, ``{"usage": {"prompt_tokens": 1,
  "completion_tokens": 2, "reasoning_tokens": 3}}`` — overrides;
* ``{"status": 500, "body": {...}, "headers": {...}}`` — an HTTP error;
* ``{"cut": "mid_tool_call"}`` — a stream that stops mid tool call without a
  ``finish_reason`` or ``[DONE]``; for a plain request a truncated JSON body
  whose Content-Length matches the truncated bytes;
* ``{"raw": "<html>...</html>", "content_type": "text/html"}`` — HTTP 200 with exactly
  this body (text, or bytes as a list of ints) whatever mode was asked for, like a proxy
  or a wrong base_url answering with something that is not a chat completion;
* ``{"replay": {"status": 200, "content_type": ..., "body": ...}}`` — a real server's recorded
  answer (tests/support/data/llama, scripts/record_llama_wire.py) sent as recorded, then the connection closes;
* ``{"forward": "http://127.0.0.1:PORT"}`` — a live turn: the request goes on to that real server
  and its answer comes back as it was sent;
* ``{"delay_s": 0.5, ...}`` waits first; ``{"repeat": True, ...}`` answers every
  remaining request;
* ``{"stream_error": {...}}`` — a streamed reply that sends its content, then
  this payload as one ``data:`` event, then closes (no finish_reason, no
  ``[DONE]``), like servers that fail mid-reply;
* ``{"quirks": {...}}`` — how the reply goes on the wire, to emulate a
  provider (every key optional; the default is OpenAI's documented shape):

  - ``"tool_calls"``: ``"split"`` (id, type and name in a first delta, then
    argument pieces), ``"whole"`` (each call complete in one chunk, as Ollama
    sends them) or ``"one_chunk"`` (every call complete in a single chunk);
  - ``"index"``: ``"omit"`` (deltas without ``index``) or ``"zero"`` (every
    call at index 0, as some proxies do);
  - ``"ids"``: ``"empty"`` (``"id": ""``) or ``"omit"`` (no ``id``);
  - ``"arguments"``: ``"object"`` (arguments as a JSON object, not a string);
  - ``"reasoning_fields"``: every field name the reasoning is sent under
    (vLLM sent both ``reasoning`` and ``reasoning_content`` for a while);
  - ``"finish"``: ``"with_last_delta"`` (finish_reason rides on the last
    content or tool-call chunk) or ``"null_delta"`` (the finish chunk has
    ``"delta": null``);
  - ``"usage"``: ``"none"`` (never, even when asked), ``"in_finish_chunk"``
    or ``"every_chunk"`` (sent whether asked or not); by default a separate
    chunk when the request asks with ``stream_options.include_usage``;
  - ``"done"``: ``False`` ends the stream without ``data: [DONE]``;
  - ``"keepalive"``: N — N SSE comments ``: keep-alive`` before the first
    chunk, or N empty lines before a plain JSON body (DeepSeek under load).

An exhausted script answers HTTP 500 "script exhausted". Every request is
recorded in :attr:`ScriptedServer.requests`.

``max_chars`` makes the server a provider with a small window: a chat request
whose :func:`request_chars` exceed it is refused with HTTP 400 in the shape
``refusal`` names (``"openai"``: ``context_length_exceeded`` stating the window
as ``max_chars // 4`` tokens and the request as ``chars // 4``; ``"bare"``: the
same code with no numbers; ``"llama.cpp"``: ``exceed_context_size_error`` with
``n_ctx`` and ``n_prompt_tokens``), without consuming a script step.

CLI (for subprocess tests)::

    python -m tests.support.scripted_server --script FILE.json --port-file PATH \
        [--requests-file LOG.jsonl] [--stream auto|on|off] [--max-chars N --refusal openai|bare|llama.cpp]
"""

from __future__ import annotations

import argparse
import copy
import json
import os
import signal
import sys
import threading
import time
import urllib.error
import urllib.request
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

from tests.support.openai_wire import MODEL_ID, Headers, Reply, encode_arguments, split_text


class ScriptedServer:
    """An OpenAI-compatible HTTP server that plays a script, in a daemon thread.

    ``stream`` None answers in whichever mode each request asks for; True or
    False makes a request in the other mode fail with HTTP 400 so a test notices.
    """

    def __init__(self, script: list[dict[str, Any]], stream: bool | None = None, port: int = 0,
                 max_chars: int | None = None, refusal: str = "openai") -> None:
        self._script = [copy.deepcopy(step) for step in script]
        self._stream = stream
        self.max_chars = max_chars
        self.refusal = refusal
        self.refused = 0
        self._lock = threading.Lock()
        self._requests: list[dict[str, Any]] = []
        self._calls = iter(range(1, 1_000_000))
        self._listeners: list[Any] = []
        self._httpd = _QuietServer(("127.0.0.1", port), _make_handler(self))
        self._httpd.daemon_threads = True
        # A short poll interval keeps close() (and so every test) fast.
        self._thread = threading.Thread(
            target=self._httpd.serve_forever, kwargs={"poll_interval": 0.02}, name="scripted-model-server", daemon=True
        )
        self._thread.start()
        self._closed = False

    @property
    def port(self) -> int:
        return int(self._httpd.server_address[1])

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self.port}/v1"

    @property
    def requests(self) -> list[dict[str, Any]]:
        """Every request so far: ``{"method", "path", "headers", "body", "time"}`` (a copy; monotonic time)."""
        with self._lock:
            return copy.deepcopy(self._requests)

    @property
    def chat_requests(self) -> list[dict[str, Any]]:
        """The records (``body``, ``headers``, ...) of the chat completion requests so far."""
        return [r for r in self.requests if r["path"].rstrip("/").endswith("/chat/completions")]

    @property
    def remaining_steps(self) -> int:
        with self._lock:
            return len(self._script)

    def on_request(self, listener: Any) -> None:
        """Call ``listener(record)`` for every request (the CLI logs them to a file)."""
        self._listeners.append(listener)

    def _record(self, record: dict[str, Any]) -> None:
        with self._lock:
            self._requests.append(record)
        for listener in self._listeners:
            listener(record)

    def _next_step(self) -> dict[str, Any] | None:
        with self._lock:
            if not self._script:
                return None
            step = self._script[0]
            if not step.get("repeat"):
                self._script.pop(0)
            return copy.deepcopy(step)

    def step_for(self, body: dict[str, Any]) -> dict[str, Any] | None:
        """The step that answers this request: the script's next (subclasses may choose by the request)."""
        return self._next_step()

    def _new_reply(self, step: dict[str, Any]) -> Reply:
        with self._lock:
            return Reply(step, self._calls)

    def close(self) -> None:
        """Stop serving and release the port (idempotent)."""
        if self._closed:
            return
        self._closed = True
        self._httpd.shutdown()
        self._httpd.server_close()
        self._thread.join(timeout=5)

    def __enter__(self) -> ScriptedServer:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


class _QuietServer(ThreadingHTTPServer):
    """Clients that hang up early (timeouts, cancelled runs) are normal here, not errors to print."""

    daemon_threads = True

    def handle_error(self, request: Any, client_address: Any) -> None:
        if isinstance(sys.exc_info()[1], ConnectionError):
            return
        super().handle_error(request, client_address)


def _make_handler(server: ScriptedServer) -> type[BaseHTTPRequestHandler]:
    class Handler(_ChatHandler):
        scripted = server

    return Handler


class _ChatHandler(BaseHTTPRequestHandler):
    """HTTP/1.0 handler: every response ends by closing the connection, so a cut is a real cut."""

    scripted: ScriptedServer
    server_version = "ScriptedOpenAI/1.0"

    def log_message(self, format: str, *args: Any) -> None:
        # Keep test output quiet; the requests are recorded instead.
        return

    # -- plumbing -------------------------------------------------------
    def _send_json(self, status: int, body: Any, headers: dict[str, str] | None = None) -> None:
        data = json.dumps(body).encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        for name, value in (headers or {}).items():
            self.send_header(name, str(value))
        self.end_headers()
        self.wfile.write(data)

    def _error(self, status: int, message: str, kind: str = "invalid_request_error") -> None:
        self._send_json(status, {"error": {"message": message, "type": kind, "param": None, "code": None}})

    def _record(self, body: Any) -> None:
        self.scripted._record(
            {"method": self.command, "path": self.path, "headers": Headers(self.headers.items()), "body": body,
             "time": time.monotonic()}
        )

    # -- routes ---------------------------------------------------------
    def do_GET(self) -> None:
        self._record(None)
        if self.path.rstrip("/").endswith("/models"):
            self._send_json(
                200,
                {"object": "list", "data": [{"id": MODEL_ID, "object": "model", "created": 0, "owned_by": "k1412-tests"}]},
            )
            return
        self._error(404, f"No route for GET {self.path}.")

    def do_POST(self) -> None:
        length = int(self.headers.get("Content-Length") or 0)
        raw = self.rfile.read(length) if length else b""
        try:
            body = json.loads(raw or b"null")
        except json.JSONDecodeError:
            self._record(raw.decode("utf-8", "replace"))
            self._error(400, "The request body is not valid JSON.")
            return
        self._record(body)
        if not self.path.rstrip("/").endswith("/chat/completions"):
            self._error(404, f"No route for POST {self.path}.")
            return
        wants_stream = bool(isinstance(body, dict) and body.get("stream"))
        expected = self.scripted._stream
        if expected is not None and wants_stream != expected:
            self._error(400, f"This scripted server expects stream={expected} but the request had stream={wants_stream}.")
            return
        limit = self.scripted.max_chars
        if limit is not None and isinstance(body, dict) and request_chars(body) > limit:
            self.scripted.refused += 1
            self._send_json(400, refusal_body(self.scripted.refusal, request_chars(body), limit))
            return
        step = self.scripted.step_for(body)
        if step is None:
            self._error(500, "script exhausted: the test sent more chat requests than its script has steps", "server_error")
            return
        if step.get("delay_s"):
            time.sleep(float(step["delay_s"]))
        if "replay" in step:
            self._play_replay(step["replay"])
        elif "forward" in step:
            self._play_forward(str(step["forward"]), raw)
        elif "raw" in step:
            self._play_raw(step)
        elif "status" in step:
            self._play_status(step)
        elif step.get("cut"):
            self._play_cut(step, wants_stream)
        elif wants_stream:
            include_usage = bool((body.get("stream_options") or {}).get("include_usage"))
            self._play_stream(self.scripted._new_reply(step), body.get("model") or MODEL_ID, include_usage)
        else:
            self._play_plain(self.scripted._new_reply(step), body.get("model") or MODEL_ID)

    # -- step players ---------------------------------------------------
    def _play_status(self, step: dict[str, Any]) -> None:
        status = int(step["status"])
        body = step.get("body") or {
            "error": {"message": f"scripted HTTP {status}", "type": "server_error", "param": None, "code": None}
        }
        self._send_json(status, body, step.get("headers"))

    def _play_raw(self, step: dict[str, Any]) -> None:
        raw = step["raw"]
        data = bytes(raw) if isinstance(raw, list) else str(raw).encode()
        self.send_response(200)
        self.send_header("Content-Type", str(step.get("content_type", "application/json")))
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def _play_forward(self, base: str, raw: bytes) -> None:
        """A live turn: the request as it came, sent on to a real server; its answer relayed as it was."""
        request = urllib.request.Request(base.rstrip("/") + self.path, data=raw, method="POST",
                                         headers={"Content-Type": "application/json"})
        try:
            with urllib.request.urlopen(request, timeout=300) as answer:
                recording = {"status": answer.status, "content_type": answer.headers.get("Content-Type", ""),
                             "body": answer.read().decode("utf-8")}
        except urllib.error.HTTPError as exc:
            recording = {"status": exc.code, "content_type": exc.headers.get("Content-Type", ""),
                         "body": exc.read().decode("utf-8")}
        self._play_replay(recording)

    def _play_replay(self, recording: dict[str, Any]) -> None:
        """A real server's recorded answer (tests/support/data/llama): its status, content type and body as sent, then close."""
        self.close_connection = True
        self.send_response(int(recording["status"]))
        self.send_header("Content-Type", str(recording["content_type"]))
        self.send_header("Connection", "close")
        self.end_headers()
        self.wfile.write(str(recording["body"]).encode("utf-8"))
        self.wfile.flush()

    def _completion(self, reply: Reply, model: str) -> dict[str, Any]:
        completion: dict[str, Any] = {
            "id": "chatcmpl-scripted",
            "object": "chat.completion",
            "created": int(time.time()),
            "model": model,
            "choices": [{"index": 0, "message": reply.message(), "finish_reason": reply.finish_reason, "logprobs": None}],
            "usage": reply.usage,
        }
        if reply.quirks.get("usage") == "none":
            del completion["usage"]
        return completion

    def _play_plain(self, reply: Reply, model: str) -> None:
        keepalive = int(reply.quirks.get("keepalive") or 0)
        if not keepalive:
            self._send_json(200, self._completion(reply, model))
            return
        data = b"\n" * keepalive + json.dumps(self._completion(reply, model)).encode()
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def _start_sse(self) -> None:
        self.send_response(200)
        self.send_header("Content-Type", "text/event-stream")
        self.send_header("Cache-Control", "no-cache")
        self.end_headers()

    def _sse(self, payload: Any) -> None:
        data = payload if isinstance(payload, str) else json.dumps(payload)
        self.wfile.write(f"data: {data}\n\n".encode())
        self.wfile.flush()

    def _chunk(
        self, model: str, delta: dict[str, Any], finish_reason: str | None = None, usage: dict[str, Any] | None = None
    ) -> dict[str, Any]:
        chunk: dict[str, Any] = {
            "id": "chatcmpl-scripted",
            "object": "chat.completion.chunk",
            "created": int(time.time()),
            "model": model,
            "choices": [{"index": 0, "delta": delta, "finish_reason": finish_reason, "logprobs": None}],
        }
        if usage is not None:
            chunk["usage"] = usage
        return chunk

    def _tool_call_deltas(self, index: int, call: dict[str, str]) -> list[dict[str, Any]]:
        # Like real providers: id, type and name only in the first delta, then argument pieces.
        first = {"index": index, "id": call["id"], "type": "function", "function": {"name": call["name"], "arguments": ""}}
        rest = [{"index": index, "function": {"arguments": piece}} for piece in split_text(call["arguments"])]
        return [first, *rest]

    def _play_stream(self, reply: Reply, model: str, include_usage: bool) -> None:
        quirks = reply.quirks
        usage_mode = quirks.get("usage")
        every_chunk_usage = reply.usage if usage_mode == "every_chunk" else None
        self._start_sse()
        for _ in range(int(quirks.get("keepalive") or 0)):
            self.wfile.write(b": keep-alive\n\n")
        deltas: list[dict[str, Any]] = [{"role": "assistant", "content": ""}]
        for piece in split_text(reply.reasoning or ""):
            deltas.append({name: piece for name in reply.reasoning_fields})
        deltas.extend({"content": piece} for piece in split_text(reply.content or ""))
        if reply.stream_error is not None:
            for delta in deltas:
                self._sse(self._chunk(model, delta, usage=every_chunk_usage))
            self._sse(reply.stream_error)
            return  # HTTP/1.0: returning closes the connection
        deltas.extend(self._tool_call_wire_deltas(reply))
        with_last = quirks.get("finish") == "with_last_delta" and len(deltas) > 1
        for position, delta in enumerate(deltas):
            last = position == len(deltas) - 1
            finish = reply.finish_reason if with_last and last else None
            usage = every_chunk_usage
            if finish and usage_mode == "in_finish_chunk":
                usage = reply.usage
            self._sse(self._chunk(model, delta, finish, usage=usage))
        if not with_last:
            final = self._chunk(model, {}, reply.finish_reason,
                                usage=reply.usage if usage_mode in ("in_finish_chunk", "every_chunk") else None)
            if quirks.get("finish") == "null_delta":
                final["choices"][0]["delta"] = None
            self._sse(final)
        if include_usage and usage_mode is None:
            self._sse({"id": "chatcmpl-scripted", "object": "chat.completion.chunk", "created": int(time.time()),
                       "model": model, "choices": [], "usage": reply.usage})
        if quirks.get("done", True):
            self._sse("[DONE]")

    def _tool_call_wire_deltas(self, reply: Reply) -> list[dict[str, Any]]:
        """The deltas carrying the reply's tool calls, in the shape ``quirks["tool_calls"]`` asks for."""
        style = reply.quirks.get("tool_calls", "split")
        if style == "one_chunk":
            if not reply.tool_calls:
                return []
            return [{"tool_calls": [reply.wire_call(i, call) for i, call in enumerate(reply.tool_calls)]}]
        deltas: list[dict[str, Any]] = []
        for index, call in enumerate(reply.tool_calls):
            if style == "whole":
                deltas.append({"tool_calls": [reply.wire_call(index, call)]})
                continue
            deltas.append({"tool_calls": [reply.wire_call(index, call, whole=False)]})
            for piece in split_text(call["arguments"]):
                rest: dict[str, Any] = {"function": {"arguments": piece}}
                position = reply.wire_index(index)
                if position is not None:
                    rest["index"] = position
                deltas.append({"tool_calls": [rest]})
        return deltas

    def _play_cut(self, step: dict[str, Any], wants_stream: bool) -> None:
        call = {"id": "call_cut", "name": step.get("name", "write_file"),
                "arguments": encode_arguments(step.get("arguments", {"path": "a.txt", "content": "hello world"}))}
        if wants_stream:
            self._start_sse()
            self._sse(self._chunk(MODEL_ID, {"role": "assistant", "content": ""}))
            deltas = self._tool_call_deltas(0, call)
            for delta in deltas[: max(2, len(deltas) - 1)]:
                self._sse(self._chunk(MODEL_ID, {"tool_calls": [delta]}))
            return  # HTTP/1.0: returning closes the connection, no finish_reason, no [DONE]
        reply = Reply({"tool_calls": [call]}, iter([0]))
        data = json.dumps(self._completion(reply, MODEL_ID)).encode()
        data = data[: len(data) // 2]
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)


def request_chars(body: dict[str, Any]) -> int:
    """What a chat request puts into the window: message texts, call names and arguments, the tool schemas."""
    size = len(json.dumps(body.get("tools"), ensure_ascii=False)) if body.get("tools") else 0
    for message in body.get("messages") or []:
        content = message.get("content")
        size += len(content) if isinstance(content, str) else len(json.dumps(content, ensure_ascii=False))
        for call in message.get("tool_calls") or []:
            function = call.get("function") or {}
            size += len(str(function.get("name", ""))) + len(str(function.get("arguments", "")))
    return size


def refusal_body(kind: str, chars: int, limit: int) -> dict[str, Any]:
    """A context-length refusal as each provider words it (see k1412_ls/models/overflow.py)."""
    window, tokens = limit // 4, chars // 4
    if kind == "llama.cpp":
        return {"error": {"code": 400, "type": "exceed_context_size_error", "n_prompt_tokens": tokens, "n_ctx": window,
                          "message": f"request ({tokens} tokens) exceeds the available context size ({window} tokens), "
                                     "try increasing it"}}
    if kind == "bare":
        return {"error": {"message": "The input is too long for this model.", "type": "invalid_request_error",
                          "param": "messages", "code": "context_length_exceeded"}}
    return {"error": {"message": f"This model's maximum context length is {window} tokens. However, your messages "
                                 f"resulted in {tokens} tokens. Please reduce the length of the messages.",
                      "type": "invalid_request_error", "param": "messages", "code": "context_length_exceeded"}}


def _write_port_file(path: Path, port: int) -> None:
    # Write then rename so a reader never sees a half-written port number.
    tmp = path.with_name(path.name + ".tmp")
    tmp.write_text(str(port), encoding="utf-8")
    os.replace(tmp, path)


def main(argv: list[str] | None = None) -> int:
    """Serve a script until SIGTERM/SIGINT; write the port to ``--port-file``."""
    parser = argparse.ArgumentParser(prog="python -m tests.support.scripted_server", description=__doc__.split("\n")[0])
    parser.add_argument("--script", required=True, help="JSON file holding the list of steps")
    parser.add_argument("--port-file", required=True, help="file to receive the listening port")
    parser.add_argument("--port", type=int, default=0)
    parser.add_argument("--requests-file", help="append every request as one JSON line")
    parser.add_argument("--stream", choices=["auto", "on", "off"], default="auto")
    parser.add_argument("--max-chars", type=int, help="refuse requests longer than this many characters")
    parser.add_argument("--refusal", choices=["openai", "bare", "llama.cpp"], default="openai")
    args = parser.parse_args(argv)
    try:
        script = json.loads(Path(args.script).read_text(encoding="utf-8"))
    except (OSError, json.JSONDecodeError) as exc:
        print(f"Cannot read the script {args.script}: {exc}", file=sys.stderr)
        return 2
    if not isinstance(script, list):
        print(f"The script {args.script} must hold a JSON list of steps.", file=sys.stderr)
        return 2
    stream = {"auto": None, "on": True, "off": False}[args.stream]
    server = ScriptedServer(script, stream=stream, port=args.port, max_chars=args.max_chars, refusal=args.refusal)
    if args.requests_file:
        log_lock = threading.Lock()
        log_path = Path(args.requests_file)

        def log(record: dict[str, Any]) -> None:
            with log_lock, log_path.open("a", encoding="utf-8") as fh:
                fh.write(json.dumps(record) + "\n")

        server.on_request(log)
    stop = threading.Event()
    signal.signal(signal.SIGTERM, lambda *_: stop.set())
    signal.signal(signal.SIGINT, lambda *_: stop.set())
    _write_port_file(Path(args.port_file), server.port)
    try:
        stop.wait()
    finally:
        server.close()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
