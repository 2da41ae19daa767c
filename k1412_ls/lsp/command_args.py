"""Arguments of the ``k1412.*`` commands: one JSON object each, validated here.

Both camelCase and snake_case keys are accepted; a wrong type becomes an
InvalidParams reply naming the key.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, TypeVar

from pydantic import BaseModel, ConfigDict, Field, ValidationError
from pydantic.alias_generators import to_camel
from pygls.exceptions import JsonRpcInvalidParams

from k1412_ls.lsp.textedit import offset_at

M = TypeVar("M", bound=BaseModel)

DEFAULT_DELEGATE_TASK = (
    "Review the selected code without changing any file: read it in context, point out bugs, risks and "
    "concrete improvements with line numbers, and say what you checked."
)


class _Args(BaseModel):
    model_config = ConfigDict(extra="forbid", strict=True, alias_generator=to_camel, populate_by_name=True)


class RunTaskArgs(_Args):
    """``k1412.runTask``."""

    task: str = Field(min_length=1)
    model: str | None = None
    conversation: str | None = None


class PositionArg(_Args):
    line: int = Field(ge=0)
    character: int = Field(ge=0)


class RangeArg(_Args):
    start: PositionArg
    end: PositionArg


class DelegateArgs(_Args):
    """``k1412.delegate``: a selection and an optional task."""

    uri: str = Field(min_length=1)
    range: RangeArg
    task: str | None = None
    write: bool = False


class CancelRunArgs(_Args):
    """``k1412.cancelRun``."""

    run_id: str = Field(min_length=1)


class UndoRunArgs(_Args):
    """``k1412.undoRun``: a run id, or none for the latest run in the workspace not undone yet."""

    run_id: str | None = Field(default=None, min_length=1)


class ListModelsArgs(_Args):
    """``k1412.listModels`` takes no keys."""


def parse_args(command: str, arguments: Sequence[Any], model: type[M], *, optional: bool = False) -> M:
    """Validate the single object argument of ``command``, or raise InvalidParams with one sentence."""
    if optional and not arguments:
        arguments = [{}]
    if len(arguments) != 1 or not isinstance(arguments[0], dict):
        raise JsonRpcInvalidParams(f"{command} takes exactly one object argument; send [{{...}}].")
    try:
        return model.model_validate(arguments[0])
    except ValidationError as exc:
        err = exc.errors()[0]
        where = ".".join(str(part) for part in err["loc"]) or "arguments"
        raise JsonRpcInvalidParams(f"Invalid argument '{where}' for {command}: {err['msg']}.") from None


def selection_text(source: str, rng: RangeArg, encoding: str) -> tuple[str, int, int]:
    """The selected text and its 1-based first and last line numbers."""
    start = offset_at(source, rng.start.line, rng.start.character, encoding)
    end = offset_at(source, rng.end.line, rng.end.character, encoding)
    if end < start:
        start, end = end, start
    return source[start:end], min(rng.start.line, rng.end.line) + 1, max(rng.start.line, rng.end.line) + 1


def delegate_instruction(args: DelegateArgs) -> str:
    """What the user asked the sub-agent to do (a read-only review by default)."""
    return (args.task or DEFAULT_DELEGATE_TASK).strip()


def delegate_task(args: DelegateArgs, rel_path: str, text: str, first: int, last: int) -> str:
    """The sub-agent's task: what to do, then exactly where and what the selection is."""
    what = delegate_instruction(args)
    fence = "````" if "```" in text else "```"
    return (f"{what}\n\nThe selection is {rel_path} lines {first}-{last}:\n{fence}\n{text}\n{fence}")
