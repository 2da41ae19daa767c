"""The ``k1412.*`` command arguments, validated in-process through ``parse_args`` (no server started).

The wire (a real server answering InvalidParams for each of these) is tests/lsp/test_lsp_commands.py, e2e.
"""

from __future__ import annotations

from typing import Any

import pytest
from pydantic import BaseModel
from pygls.exceptions import JsonRpcInvalidParams

from k1412_ls.lsp import constants as c
from k1412_ls.lsp.command_args import (
    CancelRunArgs,
    DelegateArgs,
    ListModelsArgs,
    RunTaskArgs,
    UndoRunArgs,
    parse_args,
)

# (command, its one argument, what the one-sentence refusal must name)
WRONG_ARGUMENTS: list[tuple[str, Any, str]] = [
    (c.CMD_RUN_TASK, {"task": 5}, "'task'"),
    (c.CMD_RUN_TASK, {"task": "x", "bogus": 1}, "'bogus'"),
    (c.CMD_RUN_TASK, "just a string", "one object argument"),
    (c.CMD_CANCEL_RUN, {"runId": 7}, "'runId'"),
    (c.CMD_DELEGATE, {"uri": "file:///x", "range": {"start": {"line": -1, "character": 0}}}, "range"),
    (c.CMD_LIST_MODELS, {"verbose": True}, "'verbose'"),
]
MODELS: dict[str, tuple[type[BaseModel], bool]] = {  # the model and the ``optional`` flag the server passes
    c.CMD_RUN_TASK: (RunTaskArgs, False),
    c.CMD_DELEGATE: (DelegateArgs, False),
    c.CMD_CANCEL_RUN: (CancelRunArgs, False),
    c.CMD_UNDO_RUN: (UndoRunArgs, True),
    c.CMD_LIST_MODELS: (ListModelsArgs, True),
}


def _parse(command: str, arguments: list[Any]) -> BaseModel:
    model, optional = MODELS[command]
    return parse_args(command, arguments, model, optional=optional)


@pytest.mark.parametrize(("command", "argument", "fragment"), WRONG_ARGUMENTS,
                         ids=[f"{cmd}-{frag}" for cmd, _, frag in WRONG_ARGUMENTS])
def test_wrong_arguments_are_one_sentence_naming_the_key(command: str, argument: Any, fragment: str) -> None:
    with pytest.raises(JsonRpcInvalidParams) as caught:
        _parse(command, [argument])
    message = caught.value.message
    assert fragment in message and command in message, message
    assert message.endswith(".") and "\n" not in message and "Traceback" not in message


@pytest.mark.parametrize("arguments", [[], [{}, {}], [None], [["task"]]])
def test_anything_but_one_object_is_refused_for_a_required_argument(arguments: list[Any]) -> None:
    with pytest.raises(JsonRpcInvalidParams) as caught:
        _parse(c.CMD_RUN_TASK, arguments)
    assert caught.value.message == "k1412.runTask takes exactly one object argument; send [{...}]."


def test_camel_and_snake_case_keys_both_work() -> None:
    camel = _parse(c.CMD_CANCEL_RUN, [{"runId": "run-1"}])
    snake = _parse(c.CMD_CANCEL_RUN, [{"run_id": "run-1"}])
    assert isinstance(camel, CancelRunArgs) and isinstance(snake, CancelRunArgs)
    assert camel.run_id == snake.run_id == "run-1"


@pytest.mark.parametrize("command", [c.CMD_UNDO_RUN, c.CMD_LIST_MODELS])
def test_commands_with_optional_arguments_accept_none(command: str) -> None:
    assert _parse(command, []) == _parse(command, [{}])


def test_an_empty_task_and_a_strict_type_are_refused() -> None:
    with pytest.raises(JsonRpcInvalidParams, match="'task'"):
        _parse(c.CMD_RUN_TASK, [{"task": ""}])
    with pytest.raises(JsonRpcInvalidParams, match="'write'"):  # strict: "yes" is not a boolean
        _parse(c.CMD_DELEGATE, [{"uri": "file:///x", "write": "yes",
                                 "range": {"start": {"line": 0, "character": 0}, "end": {"line": 1, "character": 0}}}])


def test_a_good_delegate_argument_keeps_its_selection() -> None:
    args = _parse(c.CMD_DELEGATE, [{"uri": "file:///x.py", "task": "Review it",
                                    "range": {"start": {"line": 2, "character": 4}, "end": {"line": 5, "character": 0}}}])
    assert isinstance(args, DelegateArgs)
    assert (args.range.start.line, args.range.start.character, args.range.end.line) == (2, 4, 5)
    assert args.task == "Review it" and args.write is False
