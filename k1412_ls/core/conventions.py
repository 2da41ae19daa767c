"""What a run takes from the conventions users carry between agents: instruction files and skills.

Both are text for the model (k1412_ls/core/instructions.py, k1412_ls/core/skills.py): they enter the
context as system messages after K1412's contract, count toward the context budget, and are listed in
``run.created``. Hooks, the third convention, are commands and live in k1412_ls/core/hooks.py.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from k1412_ls.config import ConventionsSpec, user_config_path
from k1412_ls.core.instructions import load_guidance
from k1412_ls.core.skills import catalogue, find_skills, skills_records
from k1412_ls.tools.files.workspace import Workspace


def user_conventions_dir() -> Path:
    """``$XDG_CONFIG_HOME/k1412``: the user's own AGENTS.md and ``skills/`` directory."""
    return user_config_path().parent


@dataclass(frozen=True)
class Conventions:
    """The system messages a run's context gets from instruction files and skills, and what it records."""

    messages: tuple[str, ...] = ()
    instructions: tuple[dict[str, Any], ...] = ()
    skills: tuple[dict[str, Any], ...] = ()
    skill_roots: tuple[Path, ...] = field(default=())
    catalogue_chars: int = 0

    def created(self) -> dict[str, Any]:
        """The ``run.created`` fields: every instruction file read and every skill listed."""
        return {"instructions": list(self.instructions), "skills": list(self.skills)}


def load_conventions(workspace: Workspace, spec: ConventionsSpec, focus: Iterable[Path], budget_chars: int,
                     redact: Callable[[str], str] | None = None, user_dir: Path | None = None) -> Conventions:
    """Read the run's instruction files and skills; ``user_dir`` defaults to :func:`user_conventions_dir`."""
    home = user_dir if user_dir is not None else user_conventions_dir()
    guidance = load_guidance(workspace, focus, spec.instruction_files, home, budget_chars, redact)
    messages = [guidance.message] if guidance.message else []
    skills = find_skills(workspace, home / "skills") if spec.skills else []
    listing = catalogue(skills, home / "skills")
    if listing:
        messages.append(redact(listing) if redact is not None else listing)
    roots = (home / "skills",) if any(s.scope == "user" for s in skills) else ()
    return Conventions(tuple(messages), guidance.records, tuple(skills_records(skills)), roots, len(listing))


__all__ = ["Conventions", "load_conventions", "user_conventions_dir"]
