"""Skills: ``SKILL.md`` folders the model may read when a task fits, listed by name and description only.

Skills come from the workspace's ``.agents/skills/<folder>/SKILL.md`` and the user's skills directory
(``$XDG_CONFIG_HOME/k1412/skills/<folder>/SKILL.md``); a user skill of the same name wins. Each file
opens with YAML front matter (``---`` lines) carrying ``name`` and ``description``; other keys
(``allowed-tools`` and the like) are ignored: a skill is text, it adds no tool and no permission.

The model sees a catalogue of at most :data:`CATALOGUE_CHARS` characters however many skills are
installed (descriptions are shortened to fit, then skills are named without one); it reads a body on
demand with ``read_file`` (a workspace path, or the absolute path of a user skill, which read_file
accepts read-only: k1412_ls/tools/files/skill_files.py). Scripts a skill names run as ordinary commands, with
the sandbox and approvals of any other command.
"""

from __future__ import annotations

import os
import re
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from k1412_ls.tools.errors import ToolError
from k1412_ls.tools.files.workspace import Workspace

CATALOGUE_CHARS = 2_000
MAX_SKILLS = 200
MAX_SKILL_BYTES = 64 * 1024  # only the front matter is read at the start of a run
WORKSPACE_SKILLS = ".agents/skills"
_KEY = re.compile(r"^([A-Za-z_][\w-]*)\s*:\s?(.*)$")


@dataclass(frozen=True)
class Skill:
    """One installed skill: what the catalogue shows and where its body is read."""

    name: str
    description: str
    path: str  # what read_file is given: workspace-relative, or absolute for a user skill
    scope: str  # "workspace" or "user"

    def record(self) -> dict[str, str]:
        return {"name": self.name, "scope": self.scope, "path": self.path}


def _unquote(value: str) -> str:
    value = value.strip()
    if len(value) >= 2 and value[0] == value[-1] and value[0] in "\"'":
        inner = value[1:-1]
        return inner.replace("''", "'") if value[0] == "'" else inner.replace('\\"', '"')
    return value


def parse_front_matter(text: str) -> dict[str, str]:
    """The scalar keys of a ``---``-delimited YAML front matter (plain, quoted, ``|`` and ``>`` blocks)."""
    lines = text.replace("\r\n", "\n").split("\n")
    if not lines or lines[0].strip() != "---":
        return {}
    fields: dict[str, str] = {}
    key: str | None = None
    parts: list[str] = []
    block = ""

    def close() -> None:
        if key is not None:
            joined = "\n".join(parts) if block.startswith("|") else " ".join(p.strip() for p in parts)
            fields[key] = _unquote(joined.strip()) if not block else joined.strip()

    for line in lines[1:]:
        if line.strip() in ("---", "..."):
            close()
            return fields
        match = _KEY.match(line)
        if match and not line.startswith((" ", "\t")):
            close()
            key, value = match.group(1).lower(), match.group(2).strip()
            block = value if value[:1] in ("|", ">") else ""
            parts = [] if block or not value else [value]
        elif key is not None and (line.startswith((" ", "\t")) or not line.strip()):
            parts.append(line.strip() if not block.startswith("|") else line.lstrip())
    return {}  # never closed: not front matter


def _one_line(text: str, limit: int) -> str:
    return " ".join(text.split())[:limit]


def _skill(text: str, folder: str, path: str, scope: str) -> Skill | None:
    meta = parse_front_matter(text)
    name = _one_line(meta.get("name") or folder, 64)
    description = _one_line(meta.get("description", ""), 1024)
    if not name:
        return None
    return Skill(name, description, path, scope)


def _head(path: Path) -> str | None:
    try:
        with path.open("rb") as fh:
            data = fh.read(MAX_SKILL_BYTES)
    except OSError:
        return None
    return None if b"\x00" in data else data.decode("utf-8", errors="replace")


def _workspace_skills(workspace: Workspace) -> list[Skill]:
    try:
        base = workspace.resolve(WORKSPACE_SKILLS)
    except ToolError:
        return []
    if not base.is_dir():
        return []
    found: list[Skill] = []
    for folder in sorted(os.listdir(base))[:MAX_SKILLS]:
        rel = f"{WORKSPACE_SKILLS}/{folder}/SKILL.md"
        try:
            real = workspace.resolve(rel)  # a symlink out of the workspace is not followed
        except ToolError:
            continue
        text = _head(real) if real.is_file() else None
        skill = _skill(text, folder, rel, "workspace") if text is not None else None
        if skill is not None:
            found.append(skill)
    return found


def _user_skills(user_dir: Path) -> list[Skill]:
    if not user_dir.is_dir():
        return []
    root = os.path.realpath(user_dir)
    found: list[Skill] = []
    for folder in sorted(os.listdir(user_dir))[:MAX_SKILLS]:
        path = Path(root) / folder / "SKILL.md"
        real = os.path.realpath(path)
        if not real.startswith(root + os.sep) or not os.path.isfile(real):
            continue
        text = _head(Path(real))
        skill = _skill(text, folder, str(path), "user") if text is not None else None
        if skill is not None:
            found.append(skill)
    return found


def find_skills(workspace: Workspace, user_dir: Path | None) -> list[Skill]:
    """The user's skills, then the workspace's whose names the user's do not take; sorted by name."""
    user = _user_skills(user_dir) if user_dir is not None else []
    taken = {s.name for s in user}
    workspace_skills = [s for s in _workspace_skills(workspace) if s.name not in taken]
    return sorted([*user, *workspace_skills], key=lambda s: (s.name, s.scope))[:MAX_SKILLS]


def _preamble(user_dir: Path | None, scopes: set[str]) -> str:
    where = []
    if "workspace" in scopes:
        where.append(f"{WORKSPACE_SKILLS}/<name>/SKILL.md")
    if "user" in scopes and user_dir is not None:
        where.append(f"{user_dir}/<name>/SKILL.md (marked *)")
    return ("Skills: know-how you may use. When the task fits one, read its SKILL.md with read_file ("
            + " or ".join(where) + ") and follow it as guidance; it adds no tools or permissions.")


def catalogue(skills: Sequence[Skill], user_dir: Path | None, limit: int = CATALOGUE_CHARS) -> str:
    """The catalogue the model sees, at most ``limit`` characters: names and descriptions, shortened to fit."""
    if not skills:
        return ""
    head = _preamble(user_dir, {s.scope for s in skills})
    names = [f"\n- {s.name}{'*' if s.scope == 'user' else ''}" for s in skills]
    room = limit - len(head)
    listed = len(skills)
    tail = ""
    while listed and sum(len(n) for n in names[:listed]) + len(tail) > room:
        listed -= 1
        tail = f"\n(and {len(skills) - listed} more: list_files {WORKSPACE_SKILLS})"
    spare = room - len(tail) - sum(len(n) for n in names[:listed])
    wants = [len(s.description) + 2 if s.description else 0 for s in skills[:listed]]
    shares = _water_fill(wants, spare)
    lines = []
    for skill, name, share in zip(skills[:listed], names, shares, strict=False):
        text = skill.description
        if share <= 2 or not text:
            lines.append(name)
        elif len(text) + 2 <= share:
            lines.append(f"{name}: {text}")
        else:
            lines.append(f"{name}: {text[:share - 3].rstrip()}…")
    return head + "".join(lines) + tail


def _water_fill(wants: list[int], total: int) -> list[int]:
    """Split ``total`` among ``wants``: small wants are met whole, the rest share what is left evenly."""
    shares = [0] * len(wants)
    order = sorted(range(len(wants)), key=lambda i: wants[i])
    left = max(0, total)
    for position, index in enumerate(order):
        even = left // (len(order) - position)
        shares[index] = min(wants[index], even)
        left -= shares[index]
    return shares


def skills_records(skills: Sequence[Skill]) -> list[dict[str, Any]]:
    return [s.record() for s in skills]


__all__ = ["CATALOGUE_CHARS", "Skill", "catalogue", "find_skills", "parse_front_matter", "skills_records"]
