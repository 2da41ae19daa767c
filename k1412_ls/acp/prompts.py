"""A ``session/prompt``'s content blocks as one K1412 task, and K1412's slash commands.

Text blocks are the request. A resource link is named in the task (and, for a file in the workspace,
becomes a focus path whose instruction files apply). An embedded text resource is quoted as context;
then only the typed text decides what the run must prove (``RunRequest.intent``), never the words of
the quoted file, as with the editor's delegate on a selection. Images and audio are refused
(``initialize`` says K1412 takes neither).
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path
from typing import Any
from urllib.parse import unquote, urlparse

from acp import RequestError

COMMANDS = {
    "undo": "Undo the last K1412 run in this workspace (or the run id given): every file it changed is put back",
    "replay": "Re-judge a run of this session from its event log (the latest, or the run id given)",
}


@dataclass(frozen=True)
class PromptTask:
    task: str
    intent: str | None
    focus: tuple[Path, ...]


def _file_path(uri: str, root: Path) -> Path | None:
    parsed = urlparse(uri)
    if parsed.scheme != "file":
        return None
    path = Path(os.path.realpath(unquote(parsed.path)))
    return path if path == root or str(path).startswith(str(root) + os.sep) else None


def prompt_task(blocks: list[Any], root: Path) -> PromptTask:
    """The task for ``blocks``; RequestError (invalid params) for content K1412 does not take."""
    typed: list[str] = []
    context: list[str] = []
    focus: list[Path] = []
    for block in blocks:
        kind = getattr(block, "type", None)
        if kind == "text":
            typed.append(block.text)
        elif kind == "resource_link":
            typed.append(f"[{block.name}]({block.uri})")
            path = _file_path(block.uri, root)
            if path is not None:
                focus.append(path)
        elif kind == "resource":
            resource = block.resource
            text = getattr(resource, "text", None)
            if text is None:
                raise RequestError(-32602, "K1412 takes embedded text resources only; attach the file as a link "
                                           "or paste its text.")
            context.append(f"Context from {resource.uri}:\n```\n{text}\n```")
            path = _file_path(resource.uri, root)
            if path is not None:
                focus.append(path)
        else:
            raise RequestError(-32602, f"K1412 takes text, resource links and embedded text, not {kind} content; "
                                       f"describe it in words instead.")
    request = "\n".join(part for part in typed if part.strip()).strip()
    if not request:
        raise RequestError(-32602, "The prompt has no text; say what K1412 should do.")
    if not context:
        return PromptTask(request, None, tuple(focus))
    return PromptTask(request + "\n\n" + "\n\n".join(context), request, tuple(focus))


def slash_command(text: str) -> tuple[str, str | None] | None:
    """``("undo", run_id or None)`` for ``/undo [RUN_ID]`` (and ``/replay``); None for any other prompt."""
    words = text.split()
    if not words or not words[0].startswith("/") or words[0][1:] not in COMMANDS or len(words) > 2:
        return None
    return words[0][1:], words[1] if len(words) == 2 else None


def available_commands() -> list[dict[str, Any]]:
    return [{"name": name, "description": description, "input": {"hint": "run id (optional)"}}
            for name, description in COMMANDS.items()]
