"""The process that holds a managed llama.cpp server (``python -m k1412_ls.models.managed_llama_server``).

llama.cpp's server runs inside this process through ``xllamacpp`` (no compile, no separate binary),
so killing this process kills the server: there is nothing else to clean up. It listens on
127.0.0.1 on the port it is given, with jinja chat templates on, and writes its state file (pid,
port, context size, how long the start took) once ``/health`` answers.

It stops itself (the watchdog, every 0.5 s) when nobody holds it any more. Holders are processes that
wrote a lease (see :mod:`k1412_ls.models.managed_llama`): a language server that goes away (exits or is
killed) stops it at once when no other holder is left; after the last ``k1412 run`` it lingers
``idle_s`` seconds so that the next run reuses it. It also stops when its state file is removed
(``stop``) or replaced by another server's.
"""

from __future__ import annotations

import argparse
import json
import os
import signal
import sys
import threading
import time
import urllib.request
from pathlib import Path
from typing import Any

from k1412_ls.models.leases import holder_alive, process_start_time, read_leases

WATCH_INTERVAL_S = 0.5
TEMPLATES = Path(__file__).resolve().parent / "templates"


class Watchdog:
    """Decides when the server stops: no live holder, and either a language server left or idle_s passed."""

    def __init__(self, lease_dir: Path, idle_s: float) -> None:
        self.lease_dir = lease_dir
        self.idle_s = idle_s
        self.last_held = time.monotonic()
        self.reason = ""

    def should_stop(self) -> bool:
        live = 0
        lsp_left = False
        for path, lease in read_leases(self.lease_dir):
            if holder_alive(lease):
                live += 1
                continue
            lsp_left = lsp_left or lease.get("kind") == "lsp"
            path.unlink(missing_ok=True)
        now = time.monotonic()
        if live:
            self.last_held = now
            return False
        if lsp_left:
            self.reason = "the language server that used it is gone"
            return True
        if now - self.last_held >= self.idle_s:
            self.reason = f"idle for {self.idle_s:g} s"
            return True
        return False


def template_text(chat_template: str) -> str:
    """A template file's text, a template K1412 ships (``chatml-tools``), or llama.cpp's own name as given."""
    shipped = TEMPLATES / f"{chat_template}.jinja"
    if shipped.is_file():
        return shipped.read_text(encoding="utf-8")
    path = Path(chat_template).expanduser()
    return path.read_text(encoding="utf-8") if path.is_file() else chat_template


def _healthy(port: int) -> bool:
    try:
        with urllib.request.urlopen(f"http://127.0.0.1:{port}/health", timeout=2) as answer:
            return bool(answer.status == 200)
    except Exception:
        return False


def _write_json(path: Path, data: dict[str, Any]) -> None:
    tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    tmp.write_text(json.dumps(data), encoding="utf-8")
    os.replace(tmp, path)


def serve(args: argparse.Namespace) -> int:
    started = time.monotonic()
    try:
        import xllamacpp
    except ImportError:
        print("xllamacpp is not installed: pip install 'k1412-ls[local]'", file=sys.stderr)
        return 3
    params = xllamacpp.CommonParams()
    params.model.path = args.gguf
    params.n_ctx = args.ctx
    params.n_parallel = 1
    params.use_jinja = True
    params.hostnames = ["127.0.0.1"]
    params.port = args.port
    params.sse_ping_interval = max(1, int(args.ping_s))
    if args.chat_template:
        params.chat_template = template_text(args.chat_template)
    try:
        server = xllamacpp.Server(params)
    except Exception as exc:
        print(f"llama.cpp's server did not start: {exc}", file=sys.stderr)
        return 4
    deadline = time.monotonic() + 30
    while not _healthy(args.port):
        if time.monotonic() > deadline:
            print("llama.cpp's server never answered /health", file=sys.stderr)
            return 4
        time.sleep(0.05)
    state_path = Path(args.state)
    me = {"pid": os.getpid(), "start": process_start_time(os.getpid()), "port": args.port, "gguf": args.gguf,
          "n_ctx": args.ctx, "chat_template": args.chat_template or None, "key": args.key,
          "started_at": time.time(), "start_s": round(time.monotonic() - started, 3)}
    _write_json(state_path, me)
    stop = threading.Event()
    signal.signal(signal.SIGTERM, lambda *_: stop.set())
    signal.signal(signal.SIGINT, lambda *_: stop.set())
    watchdog = Watchdog(Path(args.leases), args.idle_s)
    reason = "stopped"
    while not stop.wait(WATCH_INTERVAL_S):
        try:
            current = json.loads(state_path.read_text(encoding="utf-8"))
        except (OSError, ValueError):
            current = None
        if not isinstance(current, dict) or current.get("pid") != os.getpid():
            reason = "its state file was removed or taken over"
            break
        if watchdog.should_stop():
            reason = watchdog.reason
            break
    print(f"managed llama.cpp server stopping: {reason}", file=sys.stderr, flush=True)
    try:
        current = json.loads(state_path.read_text(encoding="utf-8"))
        if isinstance(current, dict) and current.get("pid") == os.getpid():
            state_path.unlink(missing_ok=True)
    except (OSError, ValueError):
        pass
    del server
    return 0


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m k1412_ls.models.managed_llama_server")
    parser.add_argument("--gguf", required=True)
    parser.add_argument("--ctx", type=int, required=True)
    parser.add_argument("--port", type=int, required=True)
    parser.add_argument("--state", required=True)
    parser.add_argument("--leases", required=True)
    parser.add_argument("--key", required=True)
    parser.add_argument("--idle-s", type=float, default=300.0)
    parser.add_argument("--ping-s", type=float, default=5.0)
    parser.add_argument("--chat-template", default="")
    return serve(parser.parse_args(argv))


if __name__ == "__main__":
    raise SystemExit(main())
