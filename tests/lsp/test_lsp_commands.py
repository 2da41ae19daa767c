"""End to end: capabilities, the delegate code action, listModels, runTask arguments and delegate."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest
from lsprotocol import types
from pygls.exceptions import JsonRpcInvalidParams

from k1412_ls.lsp import constants as c
from tests.lsp.test_lsp_command_args import WRONG_ARGUMENTS
from tests.support.lsp_client import CLIENT_NAMES, lsp_session

pytestmark = [pytest.mark.e2e, pytest.mark.parametrize("client", CLIENT_NAMES)]


async def test_capabilities_advertise_commands_and_code_actions(tmp_path: Path, client: str) -> None:
    async with lsp_session(tmp_path, client=client) as session:
        caps = session.init_result.capabilities
        assert caps.execute_command_provider is not None
        assert set(caps.execute_command_provider.commands) == set(c.COMMANDS)
        assert caps.code_action_provider
        assert session.init_result.server_info.name == c.SERVER_NAME


async def test_delegate_action_appears_on_a_selection_only(tmp_path: Path, client: str) -> None:
    async with lsp_session(tmp_path, client=client) as session:
        (session.root / "a.py").write_text("x = 1\ny = 2\n", encoding="utf-8")
        uri = session.editor.open(session.root / "a.py")

        async def actions(rng: types.Range) -> list[types.CodeAction]:
            params = types.CodeActionParams(text_document=types.TextDocumentIdentifier(uri=uri), range=rng,
                                            context=types.CodeActionContext(diagnostics=[]))
            result = await asyncio.wait_for(session.client.text_document_code_action_async(params), 10)
            return list(result or [])

        cursor = types.Position(line=1, character=0)
        assert await actions(types.Range(start=cursor, end=cursor)) == []
        selection = types.Range(start=types.Position(line=0, character=0), end=types.Position(line=1, character=5))
        (action,) = await actions(selection)
        assert action.title == c.CODE_ACTION_DELEGATE_TITLE
        assert action.command.command == c.CMD_DELEGATE
        (argument,) = action.command.arguments
        assert argument["uri"] == uri
        assert argument["range"]["end"] == {"line": 1, "character": 5}


async def test_list_models_lists_configured_models(tmp_path: Path, client: str) -> None:
    async with lsp_session(tmp_path, client=client) as session:
        models = await session.command(c.CMD_LIST_MODELS, {})
        by_id = {model["id"]: model for model in models}
        assert by_id["scripted"]["provider"] == "test"
        assert by_id["scripted"]["default"] is True
        assert {"luna", "terra", "sol", "deepseek-v4-pro"} <= set(by_id)
        assert by_id["deepseek-v4-pro"]["reasoning_effort"] == "max"


async def test_wrong_arguments_get_invalid_params(tmp_path: Path, client: str) -> None:
    """Each command's bad argument, over the wire in one session (the table is tests/lsp/test_lsp_command_args.py)."""
    async with lsp_session(tmp_path, client=client) as session:
        for command, argument, fragment in WRONG_ARGUMENTS:
            with pytest.raises(JsonRpcInvalidParams) as caught:
                await session.command(command, argument)
            assert fragment in caught.value.message, (command, argument)
            assert caught.value.data is None
        assert await session.command(c.CMD_LIST_MODELS, {}), "the server still answers"


async def test_unknown_model_is_refused_before_the_run(tmp_path: Path, client: str) -> None:
    async with lsp_session(tmp_path, client=client) as session:
        with pytest.raises(JsonRpcInvalidParams) as caught:
            await session.command(c.CMD_RUN_TASK, {"task": "say hi", "model": "no-such-model"})
        assert "Unknown model 'no-such-model'" in caught.value.message
        assert session.model.chat_requests == []


async def test_cancel_run_of_an_unknown_run_says_so(tmp_path: Path, client: str) -> None:
    async with lsp_session(tmp_path, client=client) as session:
        result = await session.command(c.CMD_CANCEL_RUN, {"run_id": "run-nope"})
        assert result == {"run_id": "run-nope", "cancelled": False}


async def test_delegate_runs_a_read_only_review_of_the_selection(tmp_path: Path, client: str) -> None:
    script = [
        {"tool_calls": [{"name": "read_file", "arguments": {"path": "calc.py"}}]},
        {"content": "Reviewed: divide() does not handle b == 0."},
    ]
    async with lsp_session(tmp_path, script, client=client) as session:
        # The selected code's own words ("fix", "run the tests", "write a report") must not add requirements
        # that a read-only review cannot meet: only the instruction decides what the run must prove.
        (session.root / "calc.py").write_text("def divide(a, b):\n    return a / b  # TODO: fix this, then run "
                                              "the tests and write a report\n", encoding="utf-8")
        uri = session.editor.open(session.root / "calc.py")
        line_two = (session.root / "calc.py").read_text().splitlines()[1]
        selection = {"start": {"line": 0, "character": 0}, "end": {"line": 1, "character": len(line_two)}}
        result = await session.command(c.CMD_DELEGATE, {"uri": uri, "range": selection})
        assert result["status"] == "completed", result
        first = session.model.chat_requests[0]["body"]
        user_text = "\n".join(str(m.get("content")) for m in first["messages"] if m["role"] == "user")
        assert "calc.py lines 1-2" in user_text and "run the tests and write a report" in user_text
        tool_names = {tool["function"]["name"] for tool in first["tools"]}
        assert "read_file" in tool_names
        assert not tool_names & {"write_file", "patch_file", "apply_patch", "spawn_agent"}
        assert session.editor.edits == []
