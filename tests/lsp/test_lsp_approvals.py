"""Approvals in the editor: the real server asks with ``window/showMessageRequest`` and obeys the answer.

The scripted model asks to commit; ``.git`` is read-only for commands by
default, so the server must ask. The client answers Allow once, Deny, or
nothing (dismissed): only "Allow once" commits. The events log the question
and the decision.
"""

from __future__ import annotations

import json
import subprocess
from pathlib import Path
from typing import Any

import pytest
from lsprotocol import types

from k1412_ls.lsp import constants as c
from k1412_ls.tools.sandbox.command_sandbox import bubblewrap
from tests.support.lsp_client import lsp_session

pytestmark = [pytest.mark.e2e, pytest.mark.skipif(not bubblewrap().active, reason="bubblewrap is not usable here")]

COMMIT = "git -c user.name=k -c user.email=k@k commit -q --allow-empty -m agent && echo committed"
SCRIPT = [
    {"tool_calls": [{"name": "run_command", "arguments": {"command": COMMIT}}]},
    {"content": "Done.", "repeat": True},
]


def _log(ws: Path) -> list[str]:
    return subprocess.run(["git", "-C", str(ws), "log", "--format=%s"], capture_output=True, text=True,
                          check=True).stdout.split()


@pytest.mark.parametrize(("answer", "committed"), [("Allow once", True), ("Deny", False), (None, False)])
async def test_the_editor_is_asked_and_its_answer_decides(tmp_path: Path, answer: str | None,
                                                          committed: bool) -> None:
    asked: list[types.ShowMessageRequestParams] = []
    async with lsp_session(tmp_path, SCRIPT) as session:
        subprocess.run(["git", "init", "-q", str(session.root)], check=True)
        subprocess.run(["git", "-C", str(session.root), "-c", "user.name=t", "-c", "user.email=t@t", "commit", "-q",
                        "--allow-empty", "-m", "base"], check=True)

        def on_request(params: types.ShowMessageRequestParams) -> types.MessageActionItem | None:
            asked.append(params)
            return None if answer is None else types.MessageActionItem(title=answer)

        session.client.feature(types.WINDOW_SHOW_MESSAGE_REQUEST)(on_request)
        result = await session.command(c.CMD_RUN_TASK, {"task": "Commit the work in progress"})
        tool_result: dict[str, Any] = next(
            json.loads(m["content"]) for m in session.model.chat_requests[1]["body"]["messages"]
            if m["role"] == "tool")
        events = [json.loads(line) for line in Path(result["events_path"]).read_text().splitlines()]
    assert len(asked) == 1
    question = asked[0]
    assert COMMIT in question.message and "writes .git" in question.message
    assert [a.title for a in question.actions or []] == ["Allow once", "Always allow `git commit`", "Deny"]
    assert (_log(session.root) == ["agent", "base"]) is committed
    assert tool_result["ok"] is committed, tool_result
    decided = [e["payload"] for e in events if e["type"] == "approval.decided"]
    assert decided and decided[0]["decision"] == ("allow_once" if committed else "deny")
    assert decided[0]["by"] == ("user" if answer is not None else "no answer")


async def test_the_editor_prompt_shows_the_whole_command_with_its_controls_visible(tmp_path: Path) -> None:
    """A long command hiding its tail behind ``ESC[2K ESC[1A`` (erase the line, cursor up): the prompt shows every
    character of it, the escapes as pictures, nothing cut. Control: the same text raw holds the ESC bytes."""
    hidden = "\x1b[2K\x1b[1A && echo TAIL-MARKER > ../outside.txt"
    command = COMMIT + " # " + "x" * 400 + hidden
    assert "\x1b" in command and len(command) > 300  # what a raw prompt would have shown (and cut)
    script = [{"tool_calls": [{"name": "run_command", "arguments": {"command": command}}]},
              {"content": "Done.", "repeat": True}]
    asked: list[types.ShowMessageRequestParams] = []
    async with lsp_session(tmp_path, script) as session:
        subprocess.run(["git", "init", "-q", str(session.root)], check=True)

        def on_request(params: types.ShowMessageRequestParams) -> types.MessageActionItem | None:
            asked.append(params)
            return types.MessageActionItem(title="Deny")

        session.client.feature(types.WINDOW_SHOW_MESSAGE_REQUEST)(on_request)
        await session.command(c.CMD_RUN_TASK, {"task": "Commit the work in progress"})
    assert len(asked) == 1
    message = asked[0].message
    assert "\x1b" not in message and "\u241b[2K\u241b[1A" in message
    assert "TAIL-MARKER > ../outside.txt" in message and "x" * 400 in message
