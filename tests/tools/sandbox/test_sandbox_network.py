"""The ``[sandbox]`` switches: network off by default, no sandbox means no commands, and their trust rules.

The network tests start a TCP server on 127.0.0.1 in the test process. With the
network off a command runs in its own network namespace, whose loopback is a
different one, so it cannot reach that server; with the network on it can.
No traffic leaves 127.0.0.1.
"""

from __future__ import annotations

import json
import shlex
import socket
import sys
import threading
from collections.abc import Iterator
from pathlib import Path

import pytest

from k1412_ls.config import ConfigError, load_config
from k1412_ls.tools.files.documents import DiskDocumentStore
from k1412_ls.tools.files.workspace import Workspace
from k1412_ls.tools.ports import RunServices
from k1412_ls.tools.processes import process_tools, run_command
from k1412_ls.tools.processes.process_tools import ProcessTable
from k1412_ls.tools.registry import ToolContext, ToolRegistry, ToolResult
from k1412_ls.tools.sandbox.command_sandbox import (
    SANDBOXED,
    UNSANDBOXED_BY_USER,
    SandboxPolicy,
    bubblewrap,
    network_namespace_problem,
)
from tests.support.cli import config_for, k1412
from tests.support.scripted_server import ScriptedServer

REGISTRY = ToolRegistry([*run_command.TOOLS, *process_tools.TOOLS])
GREETING = "greetings-from-the-test-process"
REFUSAL_START = "Commands cannot run because no sandbox works on this machine ("

needs_netns = pytest.mark.skipif(not bubblewrap().active or network_namespace_problem() is not None,
                                 reason="bubblewrap cannot unshare the network here")


class GreetingServer:
    """A TCP server on 127.0.0.1 that sends GREETING to each client and counts them."""

    def __init__(self) -> None:
        self.sock = socket.create_server(("127.0.0.1", 0))
        self.sock.settimeout(0.1)
        self.port: int = self.sock.getsockname()[1]
        self.accepted = 0
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._serve, daemon=True)
        self._thread.start()

    def _serve(self) -> None:
        while not self._stop.is_set():
            try:
                conn, _ = self.sock.accept()
            except TimeoutError:
                continue
            except OSError:
                return
            with conn:
                self.accepted += 1
                conn.sendall(GREETING.encode())

    def close(self) -> None:
        self._stop.set()
        self._thread.join(5)
        self.sock.close()

    def client_command(self) -> str:
        """A shell command that connects to this server and prints what it sends."""
        code = (f"import socket; s = socket.create_connection(('127.0.0.1', {self.port}), timeout=5); "
                "print(s.recv(100).decode())")
        return f"{shlex.quote(sys.executable)} -c {shlex.quote(code)}"


@pytest.fixture
def server() -> Iterator[GreetingServer]:
    srv = GreetingServer()
    yield srv
    srv.close()


def make_ctx(tmp_path: Path, policy: SandboxPolicy | None) -> tuple[ToolContext, ProcessTable]:
    ws = tmp_path / "ws"
    ws.mkdir(exist_ok=True)
    table = ProcessTable()
    return ToolContext(workspace=Workspace(ws), documents=DiskDocumentStore(), run_id="r-net",
                       services=RunServices(processes=table, sandbox=policy)), table


@pytest.fixture
def offline(tmp_path: Path) -> Iterator[ToolContext]:
    ctx, table = make_ctx(tmp_path, SandboxPolicy(network=False))
    yield ctx
    table.kill_all()


@pytest.fixture
def online(tmp_path: Path) -> Iterator[ToolContext]:
    ctx, table = make_ctx(tmp_path, SandboxPolicy(network=True))
    yield ctx
    table.kill_all()


@pytest.fixture
def no_bwrap(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    """Simulate a machine without bubblewrap (K1412_BWRAP names a missing one), restoring the probes afterwards."""
    monkeypatch.setenv("K1412_BWRAP", "/nonexistent/bwrap")
    bubblewrap.cache_clear()
    network_namespace_problem.cache_clear()
    yield
    monkeypatch.delenv("K1412_BWRAP")
    bubblewrap.cache_clear()
    network_namespace_problem.cache_clear()


def call(ctx: ToolContext, tool: str, **arguments: object) -> ToolResult:
    return REGISTRY.execute(tool, dict(arguments), ctx)


# --- enforcement -----------------------------------------------------------------------------------------

@needs_netns
def test_network_off_cannot_reach_a_host_loopback_server(offline: ToolContext, server: GreetingServer) -> None:
    result = call(offline, "run_command", command=server.client_command(), timeout_s=30)
    assert result.data["ok"] is False and result.data["exit_code"] != 0
    assert "ConnectionRefusedError" in result.data["output"]
    assert GREETING not in result.data["output"]
    assert server.accepted == 0
    assert result.facts["sandbox"] == f"{SANDBOXED}, network off"
    assert result.data["sandbox"] == f"{SANDBOXED}, network off"  # the model learns why


@needs_netns
def test_network_on_reaches_the_server(online: ToolContext, server: GreetingServer) -> None:
    result = call(online, "run_command", command=server.client_command(), timeout_s=30)
    assert result.data["ok"] is True, result.data
    assert result.data["output"].strip() == GREETING
    assert server.accepted == 1
    assert result.facts["sandbox"] == SANDBOXED and "sandbox" not in result.data


@needs_netns
def test_no_policy_in_the_context_means_the_default_network_off(tmp_path: Path, server: GreetingServer) -> None:
    ctx, table = make_ctx(tmp_path, None)
    try:
        result = call(ctx, "run_command", command=server.client_command(), timeout_s=30)
    finally:
        table.kill_all()
    assert result.data["ok"] is False and "ConnectionRefusedError" in result.data["output"]
    assert server.accepted == 0


@needs_netns
def test_network_off_keeps_a_private_loopback(offline: ToolContext) -> None:
    code = ("import socket; srv = socket.create_server(('127.0.0.1', 0)); "
            "c = socket.create_connection(srv.getsockname(), timeout=5); a, _ = srv.accept(); "
            "a.sendall(b'inside'); print(c.recv(10).decode())")
    result = call(offline, "run_command", command=f"{shlex.quote(sys.executable)} -c {shlex.quote(code)}",
                  timeout_s=30)
    assert result.data["ok"] is True, result.data
    assert result.data["output"].strip() == "inside"


@needs_netns
def test_background_process_is_off_the_network_too(offline: ToolContext, server: GreetingServer) -> None:
    started = call(offline, "process_start", command=server.client_command())
    assert started.data["ok"] is True
    assert started.facts["sandbox"] == f"{SANDBOXED}, network off"
    polled = call(offline, "process_poll", process_id=started.data["process_id"], wait_s=20)
    assert polled.data["status"] == "exited" and polled.data["exit_code"] != 0
    assert "ConnectionRefusedError" in polled.data["output"]
    assert polled.facts["sandbox"] == f"{SANDBOXED}, network off"
    assert server.accepted == 0


def test_a_misconfigured_policy_refuses_to_run(tmp_path: Path) -> None:
    ctx, table = make_ctx(tmp_path, None)
    ctx.services.sandbox = {"network": False}  # type: ignore[assignment]  # an embedder's mistake
    try:
        result = call(ctx, "run_command", command="touch ran")
    finally:
        table.kill_all()
    assert result.data["ok"] is False and "sandbox of this run is misconfigured" in result.data["error"]
    assert not (ctx.workspace.root / "ran").exists()


# --- without bubblewrap: fail closed ---------------------------------------------------------------------

@pytest.mark.usefixtures("no_bwrap")
@pytest.mark.parametrize("network", [False, True])
def test_without_bwrap_every_command_is_refused(tmp_path: Path, network: bool) -> None:
    ctx, table = make_ctx(tmp_path, SandboxPolicy(network=network))
    try:
        for tool in ("run_command", "process_start"):
            result = call(ctx, tool, command="touch ran")
            error = result.data["error"]
            assert result.data["ok"] is False, tool
            assert error.startswith(REFUSAL_START) and "/nonexistent/bwrap" in error
            assert error.endswith('set [sandbox] mode = "off" in your user configuration.')
            assert "\n" not in error
        assert table.ids() == []
    finally:
        table.kill_all()
    assert not (ctx.workspace.root / "ran").exists()


@pytest.mark.usefixtures("no_bwrap")
def test_without_bwrap_the_users_mode_off_runs_commands_and_says_so(tmp_path: Path) -> None:
    ctx, table = make_ctx(tmp_path, SandboxPolicy(mode="off"))
    try:
        result = call(ctx, "run_command", command="echo hi")
    finally:
        table.kill_all()
    assert result.data["ok"] is True and result.data["output"].strip() == "hi"
    assert result.data["sandbox"] == UNSANDBOXED_BY_USER == result.facts["sandbox"]


# --- the configuration key -------------------------------------------------------------------------------

def write(path: Path, text: str) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")
    return path


def user_config(text: str) -> Path:
    import os

    return write(Path(os.environ["XDG_CONFIG_HOME"]) / "k1412" / "config.toml", text)


def test_network_defaults_to_off(tmp_path: Path) -> None:
    assert load_config(None, tmp_path).sandbox.network is False
    assert load_config(str(write(tmp_path / "c.toml", "[sandbox]\n"))).sandbox.network is False
    assert load_config(str(write(tmp_path / "c.toml", "[sandbox]\nnetwork = true\n"))).sandbox.network is True


@pytest.mark.parametrize(
    ("text", "needle"),
    [
        ('[sandbox]\nnetwork = "no"\n', "key 'sandbox.network'"),
        ("[sandbox]\nnetwork = 0\n", "key 'sandbox.network'"),
        ("[sandbox]\nnet = false\n", "key 'sandbox.net'"),
        ("sandbox = true\n", "key 'sandbox'"),
    ],
)
def test_a_bad_sandbox_key_is_one_sentence_naming_it(tmp_path: Path, text: str, needle: str) -> None:
    cfg = write(tmp_path / "bad.toml", text)
    with pytest.raises(ConfigError) as info:
        load_config(str(cfg))
    message = str(info.value)
    assert message.startswith(f"Invalid configuration in {cfg}: ") and needle in message
    assert "\n" not in message and message.endswith(".")


# --- the workspace file may only turn the network off -----------------------------------------------------

def workspace_config(ws: Path, text: str) -> Path:
    return write(ws / ".k1412" / "config.toml", text)


def test_a_workspace_file_may_turn_the_network_off(tmp_path: Path) -> None:
    workspace_config(tmp_path, "[sandbox]\nnetwork = false\n")
    assert load_config(None, tmp_path).sandbox.network is False


@pytest.mark.parametrize("user_says", [None, "true", "false"])
def test_a_workspace_file_may_never_turn_the_network_on(tmp_path: Path, user_says: str | None) -> None:
    if user_says is not None:
        user_config(f"[sandbox]\nnetwork = {user_says}\n")
    cfg = workspace_config(tmp_path, "[sandbox]\nnetwork = true\n")
    with pytest.raises(ConfigError) as info:
        load_config(None, tmp_path)
    message = str(info.value)
    assert str(cfg) in message and "may not set 'sandbox.network = true'" in message
    assert "only 'false' is allowed there" in message and "\n" not in message
    # The same file is trusted when the user names it.
    assert load_config(str(cfg), tmp_path).sandbox.network is True


def test_a_workspace_file_cannot_undo_the_users_network_off_by_existing(tmp_path: Path) -> None:
    user_config('default_model = "sol"\n[sandbox]\nnetwork = false\n')
    workspace_config(tmp_path, 'default_model = "terra"\n')
    config = load_config(None, tmp_path)
    assert config.default_model == "terra"  # the workspace file is still the one in use
    assert config.sandbox.network is False  # but the user's switch holds
    workspace_config(tmp_path, 'default_model = "terra"\n[sandbox]\n')
    assert load_config(None, tmp_path).sandbox.network is False


def test_a_workspace_file_without_the_key_keeps_the_default_when_the_user_allows(tmp_path: Path) -> None:
    user_config("[sandbox]\nnetwork = true\n")
    workspace_config(tmp_path, 'default_model = "terra"\n')
    assert load_config(None, tmp_path).sandbox.network is True


def test_trusted_files_decide_on_their_own(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    user_config("[sandbox]\nnetwork = false\n")
    workspace_config(tmp_path, "[sandbox]\nnetwork = true\n")
    explicit = write(tmp_path / "explicit.toml", "[sandbox]\nnetwork = true\n")
    assert load_config(str(explicit), tmp_path).sandbox.network is True
    monkeypatch.setenv("K1412_CONFIG", str(explicit))
    assert load_config(None, tmp_path).sandbox.network is True


# --- through the real CLI --------------------------------------------------------------------------------

def cli_run(tmp_path: Path, command: str, env: dict[str, str] | None = None) -> tuple[dict, list[dict]]:
    """One real ``k1412 run`` whose scripted model runs ``command``; the tool result and the events."""
    ws = tmp_path / "ws"
    ws.mkdir(exist_ok=True)
    script = [
        {"tool_calls": [{"name": "run_command", "arguments": {"command": command, "timeout_s": 30}}]},
        {"content": "The command could not reach the server.", "repeat": True},
    ]
    with ScriptedServer(script) as model:
        cfg = config_for(tmp_path, model.base_url, extra="[sandbox]\nnetwork = false\n")
        run = k1412("run", "Fetch the greeting from the local server", "--config", str(cfg), "--json", cwd=ws,
                    env=env, timeout=120)
        requests = model.chat_requests
    assert run.code in (0, 3), run.stderr
    assert len(requests) >= 2  # the K1412 process itself still reached the model on 127.0.0.1
    tool_results = [json.loads(m["content"]) for m in requests[1]["body"]["messages"] if m["role"] == "tool"]
    return tool_results[-1], run.events()


@pytest.mark.e2e
@needs_netns
def test_cli_network_off_from_the_config_file(tmp_path: Path, server: GreetingServer) -> None:
    result, events = cli_run(tmp_path, server.client_command())
    assert result["ok"] is False and "ConnectionRefusedError" in result["output"]
    assert result["sandbox"] == f"{SANDBOXED}, network off"
    assert server.accepted == 0
    done = [e for e in events if e["type"] == "tool.completed" and e["payload"]["tool"] == "run_command"]
    assert done and done[0]["payload"]["facts"]["sandbox"] == f"{SANDBOXED}, network off"


@pytest.mark.e2e
def test_cli_without_bwrap_refuses(tmp_path: Path) -> None:
    result, _ = cli_run(tmp_path, "touch ran", env={"K1412_BWRAP": "/nonexistent/bwrap"})
    assert result["ok"] is False
    assert result["error"].startswith(REFUSAL_START)
    assert not (tmp_path / "ws" / "ran").exists()


@pytest.mark.parametrize(("user_cap", "ws_cap", "expected"), [
    (None, 100_000, 1024),  # above the default: the default holds
    ("24", 100_000, 24),    # above the user's: the user's holds
    ("2048", 64, 64),       # lower: taken
])
def test_a_workspace_file_may_lower_the_process_cap_never_raise_it(tmp_path: Path, user_cap: str | None,
                                                                    ws_cap: int, expected: int) -> None:
    if user_cap is not None:
        user_config(f"[sandbox]\nmax_processes = {user_cap}\n")
    workspace_config(tmp_path, f"[sandbox]\nmax_processes = {ws_cap}\n")
    assert load_config(None, tmp_path).sandbox.max_processes == expected
