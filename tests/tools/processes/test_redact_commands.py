"""End to end: a command that prints a known key encoded, folded or reversed leaks nothing.

The key sits in a workspace ``.env`` (the child's own environment is scrubbed,
so a file is how a command gets at it) and is the value of the provider's
``api_key_env`` variable, so the run knows it. It matches no credential
pattern: only the known-value redaction can hide it. Each command is first run
bare (positive control: its output really gives the key away, by the
independent decoders of ``test_redact_encodings``), then through the real
tools, and through ``k1412 run`` with a scripted model, where the tool results
sent to the model, the JSON result and every string of the event log are
checked.
"""

from __future__ import annotations

import json
import os
import subprocess
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from k1412_ls.text.redact import REDACTED, Redactor
from k1412_ls.tools.files.documents import DiskDocumentStore
from k1412_ls.tools.files.workspace import Workspace
from k1412_ls.tools.ports import RunServices
from k1412_ls.tools.processes import process_tools, run_command
from k1412_ls.tools.processes.process_tools import ProcessTable
from k1412_ls.tools.registry import ToolContext, ToolRegistry
from tests.support.cli import CliRun, config_for
from tests.support.scripted_server import ScriptedServer
from tests.text.test_redact_encodings import leaked

KEY = "Zq4-e2e-canary-Qm7RxT2vWk9LpZ4sNc8HjY3bFd6"
KEY_ENV = "K1412_TEST_KEY"
REGISTRY = ToolRegistry([*run_command.TOOLS, *process_tools.TOOLS])

LOAD = ". ./.env && "
COMMANDS: dict[str, str] = {
    "base64": LOAD + "echo $KEY | base64",
    "base64 inside a blob (alignment 1)": LOAD + 'base64 <<< "key=$KEY"',
    "base64 inside a blob (alignment 2)": LOAD + 'base64 <<< "ke=$KEY"',
    "base64 url-safe unpadded": LOAD + "printf %s \"$KEY\" | base64 -w 0 | tr '+/' '-_' | tr -d =",
    "base64 folded": LOAD + "echo $KEY | base64 | fold -w 12",
    "xxd -p": LOAD + "echo $KEY | xxd -p",
    "xxd -p upper": LOAD + "echo $KEY | xxd -p -u",
    "xxd": LOAD + "echo $KEY | xxd",
    "hexdump -C": LOAD + "printf %s \"$KEY\" | hexdump -C",
    "od -An -tx1": LOAD + "echo $KEY | od -An -tx1",
    "rev": LOAD + "echo $KEY | rev",
    "fold -w 8": LOAD + "echo $KEY | fold -w 8",
    "fold quoted": LOAD + "echo $KEY | fold -w 10 | sed 's/^/> /'",
    "fold CRLF": LOAD + "echo $KEY | fold -w 9 | sed 's/$/\\r/'",
    "percent-encoded": LOAD + "printf %s \"$KEY\" | xxd -p -c 256 | sed 's/../%&/g'",
}


@pytest.fixture
def workspace(tmp_path: Path) -> Path:
    ws = tmp_path / "ws"
    ws.mkdir()
    (ws / ".env").write_text(f"KEY={KEY}\n")
    return ws


@pytest.fixture
def ctx(workspace: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[ToolContext]:
    monkeypatch.setenv(KEY_ENV, KEY)
    table = ProcessTable()
    # Built the way core/runtime.py builds the run's redactor.
    redactor = Redactor.from_environment(extra_names=[KEY_ENV])
    yield ToolContext(workspace=Workspace(workspace), documents=DiskDocumentStore(), run_id="r-redact",
                      services=RunServices(processes=table), redactor=redactor)
    table.kill_all()


def bare_output(command: str, cwd: Path) -> str:
    done = subprocess.run(["bash", "-c", command], cwd=cwd, capture_output=True, text=True, check=False,
                          env={"PATH": os.environ.get("PATH", "/usr/bin:/bin")})
    return done.stdout + done.stderr


def strings(value: Any) -> Iterator[str]:
    """Every string inside a JSON value (so folded output is checked with its real line breaks)."""
    if isinstance(value, str):
        yield value
    elif isinstance(value, dict):
        for item in value.values():
            yield from strings(item)
    elif isinstance(value, list):
        for item in value:
            yield from strings(item)


def leaks_in(value: Any) -> list[str]:
    return sorted({piece for text in strings(value) for piece in leaked(text, KEY)})


@pytest.mark.parametrize("command", list(COMMANDS.values()), ids=list(COMMANDS))
def test_run_command_output_does_not_leak_the_encoded_key(ctx: ToolContext, workspace: Path, command: str) -> None:
    assert leaked(bare_output(command, workspace), KEY), "control: the bare command prints the key"
    result = REGISTRY.execute("run_command", {"command": command}, ctx)
    assert result.data["exit_code"] == 0, result.data
    assert REDACTED in result.data["output"]
    assert leaks_in(result.data) == [] and leaks_in(result.facts) == []
    assert leaks_in(json.loads(result.to_message())) == []


def test_background_process_output_does_not_leak_the_encoded_key(ctx: ToolContext) -> None:
    command = COMMANDS["base64 inside a blob (alignment 1)"] + "; " + COMMANDS["fold -w 8"][len(LOAD):]
    started = REGISTRY.execute("process_start", {"command": command}, ctx)
    polled = REGISTRY.execute("process_poll", {"process_id": started.data["process_id"], "wait_s": 10}, ctx)
    assert polled.data["output"].count(REDACTED) >= 2, polled.data
    assert leaks_in(polled.data) == [] and leaks_in(polled.facts) == []


@pytest.mark.e2e
def test_k1412_run_keeps_the_encoded_key_out_of_results_and_event_log(tmp_path: Path, workspace: Path) -> None:
    calls = [{"name": "run_command", "arguments": {"command": command}} for command in COMMANDS.values()]
    # At most 8 tool calls run per response: six per step.
    steps: list[dict[str, Any]] = [{"tool_calls": calls[i:i + 6]} for i in range(0, len(calls), 6)]
    script = [*steps, {"content": "Printed the key in every encoding.", "repeat": True}]
    with ScriptedServer(script) as server:
        cfg = config_for(tmp_path, server.base_url)
        cfg.write_text(cfg.read_text().replace("[providers.test]\n", f'[providers.test]\napi_key_env = "{KEY_ENV}"\n'))
        proc = subprocess.run(
            ["python3", "-m", "k1412_ls.cli", "run", "Print the key in several encodings", "--config", str(cfg),
             "--json"],
            cwd=workspace, env={**os.environ, KEY_ENV: KEY}, capture_output=True, text=True, timeout=120,
            stdin=subprocess.DEVNULL,
        )
        requests = server.chat_requests
    run = CliRun(proc.returncode, proc.stdout, proc.stderr)
    assert run.code in (0, 3), run.stderr
    tool_messages = [json.loads(m["content"]) for m in requests[-1]["body"]["messages"] if m["role"] == "tool"]
    assert len(tool_messages) == len(COMMANDS)
    for message in tool_messages:  # control: every command ran and printed something that was redacted
        assert message["exit_code"] == 0 and REDACTED in message["output"], message
    assert leaks_in(tool_messages) == []
    assert leaks_in(run.result) == [] and KEY not in run.stderr
    events = run.events()
    completed = [e for e in events if e["type"] == "tool.completed"]
    assert len(completed) == len(COMMANDS)
    assert leaks_in(events) == []
