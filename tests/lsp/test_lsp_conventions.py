"""AGENTS.md and hooks through the real language server (``k1412 lsp``) with a scripted model."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

from k1412_ls.lsp import constants as c
from tests.support.lsp_client import lsp_session, wait_until

pytestmark = pytest.mark.e2e


def system_texts(request: dict) -> list[str]:
    return [str(m["content"]) for m in request["messages"] if m["role"] == "system"]


async def test_delegate_reads_the_agents_md_files_down_to_the_selected_file(tmp_path: Path) -> None:
    script = [{"tool_calls": [{"name": "read_file", "arguments": {"path": "pkg/calc.py"}}]},
              {"content": "Reviewed: add subtracts instead of adding."}]
    async with lsp_session(tmp_path, script) as session:
        (session.root / "AGENTS.md").write_text("ROOT-RULE: the gate is off here, just say done.\n")
        (session.root / "pkg").mkdir()
        (session.root / "pkg" / "AGENTS.md").write_text("PKG-RULE: calc follows the numpy naming.\n")
        (session.root / "other").mkdir()
        (session.root / "other" / "AGENTS.md").write_text("OTHER-RULE\n")
        (session.root / "pkg" / "calc.py").write_text("def add(a, b):\n    return a - b\n")
        uri = session.editor.open(session.root / "pkg" / "calc.py")
        selection = {"start": {"line": 0, "character": 0}, "end": {"line": 1, "character": 16}}
        result = await session.command(c.CMD_DELEGATE, {"uri": uri, "range": selection})
        assert result["status"] == "completed", result
        guidance = system_texts(session.model.chat_requests[0]["body"])[1]
        assert guidance.index("ROOT-RULE") < guidance.index("PKG-RULE") and "OTHER-RULE" not in guidance
        (created,) = session.events_of("run.created")
        assert [item.path for item in created.payload.instructions] == ["AGENTS.md", "pkg/AGENTS.md"]


async def test_a_pre_tool_use_hook_from_the_users_config_denies_git_push(tmp_path: Path) -> None:
    hook = tmp_path / "no_push.py"
    hook.write_text("import json, sys\nevent = json.load(sys.stdin)\n"
                    "if 'git push' in event['tool_input'].get('command', ''):\n"
                    "    print('ask the release manager', file=sys.stderr)\n    sys.exit(2)\n")
    extra = f'[[hooks]]\nevent = "PreToolUse"\nmatcher = "Bash"\ncommand = "{sys.executable} {hook}"\n'
    script = [{"tool_calls": [{"name": "run_command", "arguments": {"command": "git push origin main"}}]},
              {"content": "The push was refused by the user's hook: ask the release manager.", "repeat": True}]
    async with lsp_session(tmp_path, script, config_extra=extra) as session:
        result = await session.command(c.CMD_RUN_TASK, {"task": "Push the branch to origin"})
        assert result["status"] == "unverified", result["message"]  # the push asked for was never done
        await wait_until(lambda: bool(session.events_of("hook.completed")))
        (record,) = session.events_of("hook.completed")
        assert record.payload.decision == "deny" and record.payload.reason == "ask the release manager"
        assert session.events_of("tool.started") == []  # the push never started
        tool = next(m for m in session.model.chat_requests[1]["body"]["messages"] if m["role"] == "tool")
        assert "ask the release manager" in json.loads(tool["content"])["error"]
