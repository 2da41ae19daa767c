"""Prefix rules (``[[approval.rules]]``): what a rule matches, and when a command's words cannot tell."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from k1412_ls.shell.words import program_name
from k1412_ls.tools.approval.command_reading import GIT_COMMANDS


@dataclass(frozen=True)
class PrefixRule:
    """Commands whose leading words are ``prefix`` get ``decision``."""

    prefix: tuple[str, ...]
    decision: str

    def matches(self, words: list[str]) -> bool:
        return len(words) >= len(self.prefix) and tuple(words[:len(self.prefix)]) == self.prefix

    def found_in(self, words: list[str]) -> bool:
        """The prefix anywhere in the words (program words by name): how ``ask``/``forbid`` rules also meet a
        program that a wrapper K1412 does not know starts (``flock /tmp/l git push``)."""
        names = [program_name(w) if "/" in w else w for w in words]
        size = len(self.prefix)
        return any(tuple(names[i:i + size]) == self.prefix for i in range(1, len(names) - size + 1))


def uncertain_rule(words: list[str], strict: list[PrefixRule]) -> str | None:
    """Why an ``ask``/``forbid`` rule may match ``words`` though its words cannot be compared: a word that is not
    literal after parsing ("") where the rule's words stand, after the words before it agreed (``git $s``,
    ``git {push,}``, ``chronic $g push``), or a git sub-command that is not a git command (an alias from a
    config the repository or an earlier command wrote, or a ``git-*`` program). None when no rule may match."""
    names = [program_name(w) if "/" in w else w for w in words]
    for rule in strict:
        size = len(rule.prefix)
        for start in range(len(names)):
            window = names[start:start + size]
            if start > 0 and window and window[0] == "" and len(window) == size and size > 1 \
                    and tuple(window[1:]) == rule.prefix[1:]:
                return f"a word that is not literal stands where '{rule.prefix[0]}' of the rule '{' '.join(rule.prefix)}' would"
            if start > 0 and (not window or window[0] != rule.prefix[0]):
                continue
            for word, wanted in zip(window, rule.prefix, strict=False):
                if word == "":
                    return (f"a word that is not literal (an expansion, a brace or glob pattern) stands where the rule "
                            f"'{' '.join(rule.prefix)}' names '{wanted}'")
                if word != wanted:
                    break
            if (window[:1] == ["git"] and size > 1 and rule.prefix[0] == "git" and len(window) > 1
                    and window[1] not in GIT_COMMANDS):
                return (f"'git {window[1]}' is not a git command (an alias from a git config, or a git-* program), "
                        f"so the rule '{' '.join(rule.prefix)}' cannot be checked")
    return None


def parse_rules(raw: list[dict[str, Any]]) -> tuple[PrefixRule, ...]:
    """``[[approval.rules]]`` tables as rules (validated by the configuration model first)."""
    return tuple(PrefixRule(tuple(str(r["prefix"]).split()), str(r["decision"])) for r in raw)


__all__ = ["PrefixRule", "parse_rules", "uncertain_rule"]
