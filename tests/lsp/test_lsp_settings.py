"""End to end: settings (initializationOptions, didChangeConfiguration) and configuration reloads."""

from __future__ import annotations

import contextlib
from pathlib import Path

import pytest
from lsprotocol import types
from pygls.exceptions import JsonRpcInvalidParams

from k1412_ls.lsp import constants as c
from k1412_ls.lsp.settings import Settings, parse_settings
from tests.conftest import write_config
from tests.support.lsp_client import lsp_session, wait_until

HELLO = [{"repeat": True, "content": "Hello."}]


@pytest.mark.parametrize(("raw", "expected", "problems"), [
    (None, Settings(), 0),
    ({"k1412": {"model": "sol", "user": "ana", "confirmEdits": True}},
     Settings(model="sol", user="ana", confirm_edits=True), 0),
    ({"model": "terra"}, Settings(model="terra"), 0),
    ({"k1412": {"model": 5, "confirmEdits": "yes"}}, Settings(), 2),
    ({"k1412": {"colour": "blue"}}, Settings(), 1),
    ({"k1412": "not an object"}, Settings(), 1),
    ({"k1412": {"model": "  "}}, Settings(), 0),
])
def test_parse_settings_defaults_every_key_and_reports_bad_values(raw: object, expected: Settings,
                                                                  problems: int) -> None:
    settings, found = parse_settings(raw)
    assert settings == expected
    assert len(found) == problems
    assert all(problem.endswith(".") and "\n" not in problem for problem in found)


def test_a_bad_value_keeps_the_previous_one() -> None:
    previous = Settings(model="sol", confirm_edits=True)
    settings, problems = parse_settings({"k1412": {"confirmEdits": 1, "model": None}}, previous)
    assert settings == Settings(model=None, confirm_edits=True)
    assert problems == ["Setting 'k1412.confirmEdits' must be true or false; its previous value is kept."]


@pytest.mark.e2e
async def test_bad_initialization_options_are_shown_and_defaults_kept(tmp_path: Path) -> None:
    options = {"k1412": {"confirmEdits": "yes", "model": 5}}
    async with lsp_session(tmp_path, HELLO, init_options=options) as session:
        await wait_until(lambda: len(session.client.messages) >= 2)
        texts = [m.message for m in session.client.messages]
        assert any("k1412.confirmEdits" in t for t in texts) and any("k1412.model" in t for t in texts)
        result = await session.command(c.CMD_RUN_TASK, {"task": "Say hello."})
        assert result["status"] == "completed"


@pytest.mark.e2e
async def test_the_model_setting_applies_and_did_change_configuration_resets_it(tmp_path: Path) -> None:
    async with lsp_session(tmp_path, HELLO, init_options={"k1412": {"model": "no-such"}}) as session:
        with pytest.raises(JsonRpcInvalidParams) as caught:
            await session.command(c.CMD_RUN_TASK, {"task": "Say hello."})
        assert "no-such" in caught.value.message
        session.client.workspace_did_change_configuration(
            types.DidChangeConfigurationParams(settings={"k1412": {"model": None}}))
        result = await session.command(c.CMD_RUN_TASK, {"task": "Say hello."})
        assert result["status"] == "completed"


@pytest.mark.e2e
async def test_confirm_edits_asks_the_editor_to_confirm(tmp_path: Path) -> None:
    script = [
        {"tool_calls": [{"name": "write_file", "arguments": {"path": "a.txt", "content": "new\n"}}]},
        {"tool_calls": [{"name": "read_file", "arguments": {"path": "a.txt"}}]},
        {"content": "Wrote a.txt."},
    ]
    async with lsp_session(tmp_path, script, init_options={"k1412": {"confirmEdits": True}}) as session:
        (session.root / "a.txt").write_text("old\n", encoding="utf-8")
        session.editor.open(session.root / "a.txt")
        await session.command(c.CMD_RUN_TASK, {"task": "Write new into a.txt."})
        (edit,) = session.editor.edits
        annotation = edit.edit.change_annotations[c.EDIT_ANNOTATION_ID]
        assert annotation.needs_confirmation is True
        assert edit.edit.document_changes[0].edits[0].annotation_id == c.EDIT_ANNOTATION_ID
        assert (session.root / "a.txt").read_text(encoding="utf-8") == "new\n"


@pytest.mark.e2e
async def test_changing_the_config_file_reloads_it(tmp_path: Path) -> None:
    async with lsp_session(tmp_path, HELLO) as session:
        extra = '[models.extra-model]\nprovider = "test"\nprovider_model = "x"\n'

        def reloaded() -> bool:
            return any("reloaded" in m.message for m in session.client.log_messages)

        for _attempt in range(20):  # the watcher starts after 'initialized'; rewrite until it has seen one
            write_config(session.config_path, session.model.base_url, extra=extra)
            with contextlib.suppress(AssertionError):
                await wait_until(reloaded, timeout=1.0)
            if reloaded():
                break
        models = await session.command(c.CMD_LIST_MODELS, {})
        assert "extra-model" in {model["id"] for model in models}


@pytest.mark.e2e
async def test_the_config_path_setting_switches_configuration(tmp_path: Path) -> None:
    async with lsp_session(tmp_path, HELLO) as session:
        other = write_config(tmp_path / "other.toml", session.model.base_url, model="other-default")
        session.client.workspace_did_change_configuration(
            types.DidChangeConfigurationParams(settings={"k1412": {"configPath": str(other)}}))
        await wait_until(lambda: any(str(other) in m.message for m in session.client.log_messages))
        models = await session.command(c.CMD_LIST_MODELS, {})
        assert next(model for model in models if model["default"])["id"] == "other-default"


def test_editor_side_keys_in_the_section_are_not_reported() -> None:
    # VS Code syncs the whole `k1412` section, including the extension's own server command.
    settings, problems = parse_settings({"k1412": {"server": {"command": ["k1412", "lsp"]}, "model": "sol"}})
    assert settings.model == "sol" and problems == []


@pytest.mark.e2e
async def test_a_workspace_config_created_later_is_picked_up(tmp_path: Path) -> None:
    async with lsp_session(tmp_path, HELLO, env={"K1412_CONFIG": ""}) as session:
        assert "late-model" not in {m["id"] for m in await session.command(c.CMD_LIST_MODELS, {})}
        config = session.root / ".k1412" / "config.toml"
        config.parent.mkdir()

        async def models() -> set[str]:
            return {m["id"] for m in await session.command(c.CMD_LIST_MODELS, {})}

        # The watcher starts after 'initialized'; rewrite until it has seen the file. Written whole (a rename),
        # as editors save: a reload that reads a half-written file would load a config without the model.
        for _attempt in range(40):
            staged = config.with_name("config.toml.tmp")
            staged.write_text('[models.late-model]\nprovider = "local"\nprovider_model = "x"\n')
            staged.replace(config)
            with contextlib.suppress(AssertionError):
                await wait_until(lambda: any("reloaded" in m.message for m in session.client.log_messages),
                                 timeout=1.0)
            if "late-model" in await models():
                break
        assert "late-model" in await models()
