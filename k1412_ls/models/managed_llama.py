"""Managed local llama.cpp servers: started by K1412 on first use, reused, stopped when idle.

A provider with ``managed = true`` and ``gguf = PATH`` (optional ``chat_template``, ``idle_s``) has no
``base_url`` of its own: the first request of a run (or of the language server) calls
:func:`ensure_server`, which reuses a healthy server already started for the same GGUF, template and
context size, or starts one (:mod:`k1412_ls.models.managed_llama_server`, in its own session, on
127.0.0.1 and a free port) and waits for ``/health``. Either way the calling process writes a lease;
the server stops itself when no live process holds a lease (at once when the holder that left was a
language server, after ``idle_s`` otherwise). Everything lives in ``<state dir>/managed/<key>/``:
``server.json`` (pid, port, start time), ``leases/``, ``server.log`` and a lock that serialises starts.

Before handing out the server, ``/props`` is read: a chat template that cannot carry tools
(``chat_template_caps.supports_tools`` false, llama.cpp then drops ``tools`` silently) is refused with
the template to use instead.
"""

from __future__ import annotations

import atexit
import fcntl
import hashlib
import json
import os
import socket
import subprocess
import sys
import time
import urllib.request
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from k1412_ls.config import ModelSpec, ProviderSpec
from k1412_ls.core.model_port import ModelError
from k1412_ls.locations import state_dir
from k1412_ls.models.leases import holder_alive, process_start_time
from k1412_ls.process_role import role

START_TIMEOUT_S = 60.0
# Characters per token assumed when sizing the server's context from a model's context_chars: low on
# purpose (code tokenises at 3-4 characters), so the window K1412 fills always fits the server's.
CHARS_PER_TOKEN = 3
_CTX_STEP = 256
TOOLS_TEMPLATE_HINT = ("set chat_template for this provider to a jinja template that renders `tools` and "
                       "`tool_calls`: chat_template = \"chatml-tools\" (shipped with K1412) for ChatML models such "
                       "as SmolLM2 or Qwen, else the path of the model family's tool-calling template")

_leases: set[Path] = set()


def context_tokens(spec: ModelSpec) -> int:
    """The server's context size for a model: its context_chars in tokens plus its output cap."""
    tokens = -(-spec.context_chars // CHARS_PER_TOKEN) + spec.max_output_tokens
    return -(-tokens // _CTX_STEP) * _CTX_STEP


def server_key(provider: ProviderSpec, n_ctx: int) -> str:
    gguf = str(Path(provider.gguf or "").expanduser().resolve())
    raw = json.dumps([gguf, provider.chat_template or "", n_ctx])
    return hashlib.sha256(raw.encode()).hexdigest()[:16]


@dataclass(frozen=True)
class ServerPlace:
    """Where one managed server keeps its files."""

    root: Path

    @property
    def state(self) -> Path:
        return self.root / "server.json"

    @property
    def leases(self) -> Path:
        return self.root / "leases"

    @property
    def log(self) -> Path:
        return self.root / "server.log"

    @property
    def lock(self) -> Path:
        return self.root / "start.lock"


def place_for(provider: ProviderSpec, n_ctx: int) -> ServerPlace:
    return ServerPlace(state_dir() / "managed" / server_key(provider, n_ctx))


def read_state(place: ServerPlace) -> dict[str, Any] | None:
    """The running server's state, None when there is none (no file, or its process is gone)."""
    try:
        data = json.loads(place.state.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    if not isinstance(data, dict) or not holder_alive(data):
        return None
    return data


def _get_json(port: int, path: str, timeout: float = 3.0) -> Any:
    with urllib.request.urlopen(f"http://127.0.0.1:{port}{path}", timeout=timeout) as answer:
        return json.loads(answer.read())


def _healthy(port: int) -> bool:
    try:
        return bool(_get_json(port, "/health").get("status") == "ok")
    except Exception:
        return False


def _free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def _hold(place: ServerPlace) -> None:
    """Write this process's lease (once per server); the server's watchdog notices when we are gone."""
    lease = place.leases / f"{os.getpid()}.json"
    if lease in _leases and lease.is_file():
        return
    place.leases.mkdir(parents=True, exist_ok=True)
    lease.write_text(json.dumps({"pid": os.getpid(), "start": process_start_time(os.getpid()),
                                 "kind": role()}), encoding="utf-8")
    _leases.add(lease)


def _release_all() -> None:
    """At exit a run leaves its lease for the watchdog to read (it decides how long to linger)."""
    _leases.clear()


atexit.register(_release_all)


def _check_tools(name: str, provider: ProviderSpec, port: int) -> None:
    try:
        props = _get_json(port, "/props")
    except Exception as exc:
        raise ModelError(f"The managed server of provider '{name}' did not answer /props ({type(exc).__name__}).") from None
    caps = props.get("chat_template_caps") if isinstance(props, dict) else None
    if isinstance(caps, dict) and caps.get("supports_tools") is False:
        which = f"the chat template {provider.chat_template}" if provider.chat_template else \
            f"the chat template inside {Path(provider.gguf or '').name}"
        raise ModelError(
            f"The managed server of provider '{name}' cannot carry tools: {which} does not render them "
            f"(llama.cpp's /props says supports_tools false, and it would drop them silently); {TOOLS_TEMPLATE_HINT}."
        )


def _start(name: str, provider: ProviderSpec, place: ServerPlace, n_ctx: int, key: str) -> dict[str, Any]:
    gguf = Path(provider.gguf or "").expanduser()
    if not gguf.is_file():
        raise ModelError(f"The managed provider '{name}' names gguf = {provider.gguf}, which is not a file.")
    try:
        import xllamacpp  # noqa: F401
    except ImportError:
        raise ModelError(f"The managed provider '{name}' needs llama.cpp's server: pip install 'k1412-ls[local]' "
                         "(the xllamacpp wheel).") from None
    place.leases.mkdir(parents=True, exist_ok=True)
    port = _free_port()
    # -P and a cwd of its own: the server never imports from the directory K1412 was started in (a workspace).
    argv = [sys.executable, "-P", "-m", "k1412_ls.models.managed_llama_server", "--gguf", str(gguf.resolve()),
            "--ctx", str(n_ctx), "--port", str(port), "--state", str(place.state), "--leases", str(place.leases),
            "--key", key, "--idle-s", str(provider.idle_s), "--chat-template", provider.chat_template or ""]
    with place.log.open("ab") as log:
        child = subprocess.Popen(argv, stdin=subprocess.DEVNULL, stdout=log, stderr=log, start_new_session=True,
                                 close_fds=True, cwd=str(place.root),
                                 env={**os.environ, "PYTHONPATH": _import_root(), "PYTHONSAFEPATH": "1"})
    deadline = time.monotonic() + START_TIMEOUT_S
    while time.monotonic() < deadline:
        state = read_state(place)
        if state is not None and state.get("pid") == child.pid:
            return state
        if child.poll() is not None:
            tail = _log_tail(place.log)
            raise ModelError(f"The managed llama.cpp server of provider '{name}' exited while starting "
                             f"(status {child.returncode}): {tail} Its log: {place.log}")
        time.sleep(0.05)
    child.kill()
    raise ModelError(f"The managed llama.cpp server of provider '{name}' did not start within "
                     f"{START_TIMEOUT_S:g} s; its log: {place.log}")


def _import_root() -> str:
    """This K1412's import root first, so the server process runs the same code as its client."""
    root = str(Path(__file__).resolve().parents[2])
    rest = os.environ.get("PYTHONPATH", "")
    return root + (os.pathsep + rest if rest else "")


def _log_tail(path: Path) -> str:
    try:
        lines = [line for line in path.read_text(encoding="utf-8", errors="replace").splitlines() if line.strip()]
    except OSError:
        return "(no log)"
    errors = [line for line in lines if " E " in line or "error" in line.lower()]
    shown = (errors or lines)[-1:] if lines else ["(empty log)"]
    return shown[0].strip()[:200]


def ensure_server(name: str, provider: ProviderSpec, spec: ModelSpec, *, tools: bool = True) -> dict[str, Any]:
    """The state of a healthy managed server for ``spec`` (started now if none runs); this process holds it."""
    n_ctx = context_tokens(spec)
    key = server_key(provider, n_ctx)
    place = place_for(provider, n_ctx)
    place.root.mkdir(parents=True, exist_ok=True)
    with place.lock.open("a+") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        state = read_state(place)
        if state is not None and not _healthy(int(state["port"])):
            _stop_pid(state)
            state = None
        reused = state is not None
        if state is None:
            state = _start(name, provider, place, n_ctx, key)
        _hold(place)  # before the lock goes: a watchdog never sees the server unheld between start and use
    try:
        if tools:
            _check_tools(name, provider, int(state["port"]))
    except ModelError:
        if not reused:
            _stop_pid(state)
        raise
    return {**state, "reused": reused, "log": str(place.log)}


def _stop_pid(state: dict[str, Any]) -> None:
    pid = state.get("pid")
    if isinstance(pid, int) and holder_alive(state):
        try:
            os.kill(pid, 15)
        except OSError:
            pass


def server_status(provider: ProviderSpec, spec: ModelSpec) -> dict[str, Any]:
    """What ``k1412 models`` shows for a managed model: running (pid, port, holders) or stopped."""
    n_ctx = context_tokens(spec)
    place = place_for(provider, n_ctx)
    state = read_state(place)
    status: dict[str, Any] = {"managed": True, "gguf": provider.gguf, "n_ctx": n_ctx}
    if state is None:
        return {**status, "state": "stopped"}
    holders = 0
    if place.leases.is_dir():
        for path in place.leases.glob("*.json"):
            try:
                holders += holder_alive(json.loads(path.read_text(encoding="utf-8")))
            except (OSError, ValueError):
                continue
    healthy = _healthy(int(state["port"]))
    return {**status, "state": "running" if healthy else "unhealthy", "pid": state["pid"], "port": state["port"],
            "holders": holders, "start_s": state.get("start_s")}


def stop_server(provider: ProviderSpec, spec: ModelSpec) -> bool:
    """Stop the managed server for ``spec`` if one runs (``k1412 models --stop``); True if one did."""
    state = read_state(place_for(provider, context_tokens(spec)))
    if state is None:
        return False
    _stop_pid(state)
    return True


def server_crash_note(provider: ProviderSpec, spec: ModelSpec) -> str:
    """A sentence for a failed request when the managed server is no longer running, else ''."""
    place = place_for(provider, context_tokens(spec))
    if read_state(place) is not None:
        return ""
    return (f" The managed llama.cpp server stopped during the request (see {place.log}); "
            "the next request starts a new one.")
