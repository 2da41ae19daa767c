"""The editor clients stay in step with the server's names (k1412_ls/lsp/constants.py).

The TypeScript constants, the Lua constants, the VS Code manifest and the
Neovim plugin are read as text, so a renamed command or setting on either side
fails here instead of silently in an editor.
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest

from k1412_ls.lsp import constants

REPO = Path(__file__).resolve().parents[1]
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
     "server.command"],
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


@pytest.mark.parametrize("module", ["constants", "args", "events", "result", "runState"])
def test_pure_typescript_modules_do_not_import_vscode(module: str) -> None:
    # These run under node's test runner, outside VS Code, where `vscode` does not exist.
    text = (VSCODE / "src" / f"{module}.ts").read_text(encoding="utf-8")
    assert not re.search(r"from '(vscode|vscode-languageclient[^']*)'", text)


def test_extension_uses_the_mirrored_names() -> None:
    source = "\n".join(path.read_text(encoding="utf-8") for path in (VSCODE / "src").glob("*.ts"))
    for name in ("CMD_RUN_TASK", "CMD_DELEGATE", "CMD_CANCEL_RUN", "NOTIFY_EVENT", "SETTINGS_SECTION"):
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
