"""An ACP client for tests of the real ``k1412 acp`` process: the SDK's client side over its stdio.

* :class:`RecordingClient`: records every ``session/update``, answers ``session/request_permission``
  from a queue of option ids (None: the ``cancelled`` outcome), and serves ``fs/read_text_file`` /
  ``fs/write_text_file`` from its own buffers like an editor with unsaved typing (a write lands in the
  buffer and is saved to disk, as Zed does), or not at all when its capabilities say so.
* :class:`RoutedModel`: one scripted model server for many tests: a request is answered from the
  script whose tag (``[t1]`` …) its latest tagged user message holds.
* :func:`acp_agent`: ``k1412 acp`` as a subprocess with its own state and configuration, initialized.
"""

from __future__ import annotations

import contextlib
import copy
import os
import sys
from collections.abc import AsyncIterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from acp import PROTOCOL_VERSION, spawn_agent_process
from acp.schema import (
    AllowedOutcome,
    ClientCapabilities,
    DeniedOutcome,
    FileSystemCapabilities,
    ReadTextFileResponse,
    RequestPermissionResponse,
    WriteTextFileResponse,
)

from tests.conftest import REPO_ROOT, write_config
from tests.support.scripted_server import ScriptedServer


@dataclass
class RecordingClient:
    """The client side: what the agent sent, and scripted answers."""

    fs: bool = True
    answers: list[str | None] = field(default_factory=list)  # option ids for permission requests, in order
    updates: list[tuple[str, Any]] = field(default_factory=list)
    permissions: list[Any] = field(default_factory=list)
    buffers: dict[str, str] = field(default_factory=dict)  # path -> unsaved text the "editor" holds
    reads: list[str] = field(default_factory=list)
    writes: list[tuple[str, str]] = field(default_factory=list)
    on_permission: Any = None  # called with the request before answering (e.g. to cancel the prompt)
    typing: dict[str, str] = field(default_factory=dict)  # path -> text the user types right after the agent read it

    async def request_permission(self, options: list[Any], session_id: str, tool_call: Any,
                                 **kwargs: Any) -> RequestPermissionResponse:
        self.permissions.append({"options": options, "tool_call": tool_call, "session_id": session_id})
        if self.on_permission is not None:
            await self.on_permission()
        answer = self.answers.pop(0) if self.answers else None
        if answer is None:
            return RequestPermissionResponse(outcome=DeniedOutcome(outcome="cancelled"))
        return RequestPermissionResponse(outcome=AllowedOutcome(outcome="selected", option_id=answer))

    async def session_update(self, session_id: str, update: Any, **kwargs: Any) -> None:
        self.updates.append((session_id, update))

    async def read_text_file(self, path: str, session_id: str, limit: int | None = None, line: int | None = None,
                             **kwargs: Any) -> ReadTextFileResponse:
        self.reads.append(path)
        text = self.buffers.get(path)
        if text is None:
            text = Path(path).read_text(encoding="utf-8")
        if path in self.typing:
            self.buffers[path] = self.typing.pop(path)
        return ReadTextFileResponse(content=text)

    async def write_text_file(self, content: str, path: str, session_id: str,
                              **kwargs: Any) -> WriteTextFileResponse | None:
        self.writes.append((path, content))
        self.buffers[path] = content
        Path(path).write_text(content, encoding="utf-8")
        return WriteTextFileResponse()

    def of(self, session_id: str, kind: str) -> list[Any]:
        """The updates of one session with ``sessionUpdate == kind``."""
        return [u for s, u in self.updates if s == session_id and u.session_update == kind]

    def text(self, session_id: str) -> str:
        return "".join(u.content.text for u in self.of(session_id, "agent_message_chunk"))


class RoutedModel(ScriptedServer):
    """A scripted server answering each request from the script of the tag in its first user message."""

    def __init__(self) -> None:
        super().__init__([])
        self.scripts: dict[str, list[dict[str, Any]]] = {}

    def add(self, tag: str, script: list[dict[str, Any]]) -> None:
        with self._lock:
            self.scripts[tag] = [copy.deepcopy(step) for step in script]

    def step_for(self, body: dict[str, Any]) -> dict[str, Any] | None:
        users = [str(m.get("content")) for m in body.get("messages", []) if m.get("role") == "user"]
        with self._lock:
            for text in reversed(users):  # the latest task with a tag (earlier ones are the conversation's history)
                for tag, script in self.scripts.items():
                    if tag in text:
                        if not script:
                            return None
                        step = script[0]
                        if not step.get("repeat"):
                            script.pop(0)
                        return copy.deepcopy(step)
        return None


def agent_env(home: Path) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k != "K1412_CONFIG"}
    env.update(K1412_HOME=str(home / "state"), XDG_CONFIG_HOME=str(home / "config"), PYTHONPATH=str(REPO_ROOT))
    return env


@contextlib.asynccontextmanager
async def acp_agent(home: Path, base_url: str, client: RecordingClient,
                    extra_config: str = "") -> AsyncIterator[tuple[Any, Any]]:
    """``k1412 acp`` started with a config for ``base_url``; yields (connection, process) after initialize."""
    home.mkdir(parents=True, exist_ok=True)
    config = write_config(home / "config.toml", base_url, extra=extra_config)
    async with spawn_agent_process(client, sys.executable, "-m", "k1412_ls.cli", "acp", "--config", str(config),
                                   env=agent_env(home), cwd=str(REPO_ROOT)) as (conn, process):
        caps = ClientCapabilities(fs=FileSystemCapabilities(read_text_file=client.fs, write_text_file=client.fs))
        await conn.initialize(protocol_version=PROTOCOL_VERSION, client_capabilities=caps)
        yield conn, process
