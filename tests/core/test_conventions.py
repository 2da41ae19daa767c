"""Instruction files, skills and hooks in process: discovery, order, budget, the catalogue cap, the hook contract."""

from __future__ import annotations

import hashlib
from pathlib import Path

import pytest

from k1412_ls.config import ConfigError, build_config, load_config
from k1412_ls.core.conventions import load_conventions
from k1412_ls.core.hooks import interpret, matches
from k1412_ls.core.instructions import GUIDANCE_SHARE
from k1412_ls.core.skills import CATALOGUE_CHARS, catalogue, find_skills, parse_front_matter
from k1412_ls.tools.files.workspace import Workspace
from k1412_ls.tools.processes.hook_process import HookProcessResult


def write(path: Path, text: str) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")
    return path


def skill(root: Path, folder: str, name: str, description: str, body: str = "Steps.\n") -> Path:
    return write(root / folder / "SKILL.md", f"---\nname: {name}\ndescription: {description}\n---\n{body}")


# --- instruction files -----------------------------------------------------------------------------------

def test_nested_files_come_root_first_nearest_last_with_the_users_own_first(tmp_path: Path) -> None:
    ws, home = tmp_path / "ws", tmp_path / "home"
    write(home / "AGENTS.md", "USER-RULE\n")
    write(ws / "AGENTS.md", "ROOT-RULE\n")
    write(ws / "pkg" / "AGENTS.md", "PKG-RULE\n")
    write(ws / "pkg" / "sub" / "AGENTS.md", "SUB-RULE\n")
    write(ws / "other" / "AGENTS.md", "OTHER-RULE\n")
    write(ws / "pkg" / "sub" / "mod.py", "x = 1\n")
    got = load_conventions(Workspace(ws), build_config({}).conventions, [ws / "pkg" / "sub" / "mod.py"], 100_000,
                           user_dir=home)
    (message,) = got.messages
    order = [message.index(word) for word in ("USER-RULE", "ROOT-RULE", "PKG-RULE", "SUB-RULE")]
    assert order == sorted(order) and "OTHER-RULE" not in message
    assert [r["path"] for r in got.instructions] == [str(home / "AGENTS.md"), "AGENTS.md", "pkg/AGENTS.md",
                                                     "pkg/sub/AGENTS.md"]
    root = got.instructions[1]
    assert root["sha256"] == hashlib.sha256(b"ROOT-RULE\n").hexdigest() and root["size"] == 10


def test_fallback_names_are_read_only_when_configured(tmp_path: Path) -> None:
    ws = tmp_path / "ws"
    write(ws / "CLAUDE.md", "CLAUDE-RULE\n")
    plain = load_conventions(Workspace(ws), build_config({}).conventions, [], 100_000, user_dir=tmp_path / "none")
    assert plain.messages == () and plain.instructions == ()
    spec = build_config({"conventions": {"instruction_files": ["AGENTS.md", "CLAUDE.md"]}}).conventions
    wider = load_conventions(Workspace(ws), spec, [], 100_000, user_dir=tmp_path / "none")
    assert "CLAUDE-RULE" in wider.messages[0] and wider.instructions[0]["path"] == "CLAUDE.md"
    write(ws / "AGENTS.md", "AGENTS-RULE\n")  # the first name found in a directory wins
    both = load_conventions(Workspace(ws), spec, [], 100_000, user_dir=tmp_path / "none")
    assert "AGENTS-RULE" in both.messages[0] and "CLAUDE-RULE" not in both.messages[0]


def test_instruction_files_stay_within_their_share_of_the_budget_cutting_the_farthest(tmp_path: Path) -> None:
    ws = tmp_path / "ws"
    write(ws / "AGENTS.md", "ROOT " * 8_000)
    write(ws / "pkg" / "AGENTS.md", "NEAR-RULE: run make check.\n")
    budget = 40_000
    got = load_conventions(Workspace(ws), build_config({}).conventions, [ws / "pkg"], budget,
                           user_dir=tmp_path / "none")
    (message,) = got.messages
    assert len(message) <= budget * GUIDANCE_SHARE
    assert "NEAR-RULE: run make check." in message  # the nearest is kept whole
    assert "read_file AGENTS.md for the rest" in message
    assert [r["cut"] for r in got.instructions] == [True, False]


def test_a_symlinked_instruction_file_leading_outside_is_not_read(tmp_path: Path) -> None:
    ws = tmp_path / "ws"
    ws.mkdir()
    secret = write(tmp_path / "outside.txt", "OUTSIDE-TEXT\n")
    (ws / "AGENTS.md").symlink_to(secret)
    got = load_conventions(Workspace(ws), build_config({}).conventions, [], 100_000, user_dir=tmp_path / "none")
    assert got.messages == ()
    (ws / "AGENTS.md").unlink()
    write(ws / "AGENTS.md", "OUTSIDE-TEXT\n")  # positive control: the same text as a plain file is read
    assert "OUTSIDE-TEXT" in load_conventions(Workspace(ws), build_config({}).conventions, [], 100_000,
                                              user_dir=tmp_path / "none").messages[0]


# --- skills ------------------------------------------------------------------------------------------------

def test_front_matter_plain_quoted_and_folded() -> None:
    text = ("---\nname: \"pdf-tools\"\ndescription: >-\n  Fill PDF forms\n  and merge files.\nallowed-tools: Bash\n"
            "---\nbody\n")
    assert parse_front_matter(text) == {"name": "pdf-tools", "description": "Fill PDF forms and merge files.",
                                        "allowed-tools": "Bash"}
    assert parse_front_matter("no front matter\n") == {}
    assert parse_front_matter("---\nname: x\n(never closed)\n") == {}


def test_forty_skills_make_a_catalogue_of_at_most_2000_characters_naming_each(tmp_path: Path) -> None:
    ws, home = tmp_path / "ws", tmp_path / "home"
    for i in range(30):
        skill(ws / ".agents" / "skills", f"s{i}", f"workspace-skill-{i:02d}",
              f"Does workspace chore number {i} the way this team likes it, with every detail spelled out " * 3)
    for i in range(10):
        skill(home / "skills", f"u{i}", f"user-skill-{i:02d}", f"Routine {i}.")
    skills = find_skills(Workspace(ws), home / "skills")
    assert len(skills) == 40
    text = catalogue(skills, home / "skills")
    assert len(text) <= CATALOGUE_CHARS
    assert all(f"workspace-skill-{i:02d}" in text for i in range(30))
    assert all(f"user-skill-{i:02d}*: Routine {i}." in text for i in range(10))  # short: whole
    assert ".agents/skills/<name>/SKILL.md" in text and f"{home / 'skills'}/<name>/SKILL.md" in text


def test_a_user_skill_wins_over_a_workspace_skill_of_the_same_name(tmp_path: Path) -> None:
    ws, home = tmp_path / "ws", tmp_path / "home"
    skill(ws / ".agents" / "skills", "deploy", "deploy", "the repository's version")
    skill(home / "skills", "deploy", "deploy", "the user's version")
    (only,) = find_skills(Workspace(ws), home / "skills")
    assert only.scope == "user" and only.description == "the user's version"


# --- hooks -------------------------------------------------------------------------------------------------

def finished(code: int | None, stdout: str = "", stderr: str = "", timed_out: bool = False) -> HookProcessResult:
    return HookProcessResult(code, stdout, stderr, timed_out, 1.0)


@pytest.mark.parametrize(("event", "result", "action", "reason"), [
    ("PreToolUse", finished(2, stderr="no pushing\n"), "deny", "no pushing"),
    ("PreToolUse", finished(0, '{"hookSpecificOutput": {"hookEventName": "PreToolUse", "permissionDecision": '
                               '"deny", "permissionDecisionReason": "not on main"}}'), "deny", "not on main"),
    ("PreToolUse", finished(0, '{"decision": "block", "reason": "legacy"}'), "deny", "legacy"),
    ("PreToolUse", finished(0, '{"hookSpecificOutput": {"permissionDecision": "allow"}}'), "allow", ""),
    ("PreToolUse", finished(1, stderr="crashed"), "error", "exit 1: crashed"),
    ("PreToolUse", finished(None, timed_out=True), "error", "the hook was killed at its timeout"),
    ("PostToolUse", finished(0, '{"hookSpecificOutput": {"additionalContext": "lint: 2 warnings"}}'), "context", ""),
    ("Stop", finished(0, '{"decision": "block", "reason": "run make check"}'), "block", "run make check"),
    ("Stop", finished(2, stderr="not yet"), "block", "not yet"),
    ("Stop", finished(0, "plain text is ignored"), "none", ""),
    ("UserPromptSubmit", finished(0, "branch: main"), "context", ""),
])
def test_the_claude_code_hook_contract(event: str, result: HookProcessResult, action: str, reason: str) -> None:
    decision = interpret(event, result)
    assert (decision.action, decision.reason) == (action, reason)


def test_on_error_block_turns_a_crash_or_timeout_into_a_refusal() -> None:
    assert interpret("PreToolUse", finished(None, timed_out=True), on_error="block").action == "deny"
    assert interpret("Stop", finished(127, stderr="not found"), on_error="block").action == "block"


def test_matchers_take_k1412_and_claude_code_tool_names() -> None:
    assert matches("Bash", "run_command") and matches("run_command", "run_command")
    assert matches("Write|Edit", "apply_patch") and not matches("Write|Edit", "run_command")
    assert matches("", "read_file") and matches("*", "read_file")


def test_a_workspace_config_may_not_add_a_hook(tmp_path: Path) -> None:
    write(tmp_path / ".k1412" / "config.toml", '[[hooks]]\nevent = "Stop"\ncommand = "touch x"\n')
    with pytest.raises(ConfigError, match="may not set 'hooks'"):
        load_config(None, tmp_path)


def test_a_bad_matcher_is_one_sentence(tmp_path: Path) -> None:
    path = write(tmp_path / "c.toml", '[[hooks]]\nevent = "PreToolUse"\nmatcher = "("\ncommand = "true"\n')
    with pytest.raises(ConfigError, match=r"hooks\.0\.matcher.*not a regular expression"):
        load_config(str(path))
