"""Intent-based tool selection: tag a request, then offer the tools it needs.

Routing, not permission: the gateway enforces everything; this only keeps
the catalogue small so a model chooses better. The tags come from the named
rules of :mod:`k1412_ls.text.vocabulary`, the same table the evidence gate
uses, so "what the request is about" is decided once.

Tool families (``select_tool_names``), each documented by the condition
that admits it:

- tools tagged ``core`` (the workspace tools): always;
- ``remember`` / ``recall`` / ``forget``: memory requests only;
- ``spawn_agent``: delegation requests only;
- ``process_*``: process requests only;
- ``git_*``: git requests, and every request that writes (artifact, source,
  report), because ``git_diff`` is the cheapest way to verify a write;
- ``update_plan``: multi-step requests (the ``multistep`` rules, or three or
  more kinds of work in one request);
- any other tool: when its own tags meet the request's tags, or when it
  declares no tags at all (an unknown tool is offered rather than hidden).
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from typing import Protocol

from k1412_ls.text.vocabulary import match_rules

# Kinds of work counted for the "three or more kinds means several steps" rule.
WORK_TAGS: frozenset[str] = frozenset({"artifact", "execution", "report", "comparison", "process", "git",
                                       "delegation"})
MULTISTEP_MIN_WORK_TAGS = 3

MEMORY_TOOLS: frozenset[str] = frozenset({"remember", "recall", "forget"})
DELEGATION_TOOLS: frozenset[str] = frozenset({"spawn_agent"})
PLAN_TOOLS: frozenset[str] = frozenset({"update_plan"})
# Requests that write get git tools too: git_diff proves what a write changed.
GIT_TAGS: frozenset[str] = frozenset({"git", "artifact", "source", "report"})


class NamedTool(Protocol):
    """Anything with a tool's ``name`` and ``tags`` (``registry.Tool`` satisfies it)."""

    @property
    def name(self) -> str: ...

    @property
    def tags(self) -> frozenset[str]: ...


@dataclass(frozen=True)
class IntentDecision:
    """The tags of a request and the names of the rules that gave them (for logs and tests)."""

    tags: frozenset[str]
    rules: tuple[str, ...]

    def has(self, tag: str) -> bool:
        """Whether the request carries ``tag``."""
        return tag in self.tags


def classify_intent(request: str) -> IntentDecision:
    """Tag ``request`` with every vocabulary rule that fires (see ``vocabulary.RULES``)."""
    fired = match_rules(request)
    tags: set[str] = set()
    for rule in fired:
        tags |= rule.tags
    names = [rule.name for rule in fired]
    if "multistep" not in tags and len(tags & WORK_TAGS) >= MULTISTEP_MIN_WORK_TAGS:
        tags.add("multistep")
        names.append("derived.many-kinds-of-work")
    return IntentDecision(frozenset(tags), tuple(names))


def _admits(name: str, tool_tags: frozenset[str], tags: frozenset[str]) -> bool:
    if "core" in tool_tags:
        return True
    if name in MEMORY_TOOLS:
        return "memory" in tags
    if name in DELEGATION_TOOLS:
        return "delegation" in tags
    if name in PLAN_TOOLS:
        return "multistep" in tags
    if name.startswith("process_"):
        return "process" in tags
    if name.startswith("git_"):
        return bool(tags & GIT_TAGS)
    return not tool_tags or bool(tool_tags & tags)


def select_tool_names(available: Iterable[NamedTool], tags: Iterable[str] | IntentDecision) -> list[str]:
    """Names of the ``available`` tools to offer for a request with ``tags``, in catalogue order."""
    wanted = tags.tags if isinstance(tags, IntentDecision) else frozenset(tags)
    return [tool.name for tool in available if _admits(tool.name, frozenset(tool.tags), wanted)]
