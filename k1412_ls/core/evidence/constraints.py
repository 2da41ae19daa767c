"""Constraints the request puts on the change set, checked against everything the run changed.

Prohibitions used to only remove obligations ("don't change any code" owed no change), so a run that broke
them still said ``completed``. A constraint is a limit on the set of paths the run changed — by file tools
and by commands alike (the ledger's writes):

- **only these paths** — "only change pricing.py", "change nothing but X", "只改 pricing.py", "仅修改 X":
  every changed path must be one of the named files (or a file the request names as a destination);
- **no code change** — "don't change any code", "without modifying the source", "先不要改代码": no source file
  may change; "don't change anything" / "不要修改任何文件" / "read-only": no path may change at all, but
  for destinations the request names ("write the findings to notes.md");
- **tests unchanged** — handled with the test integrity facts (``test_edits``, ``gate.constraint_problems``).

The words are matched per clause; what is not recognised adds no constraint (the request's obligations
still hold), so an unknown wording can never make honest work fail a constraint nobody stated.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from k1412_ls.text.vocabulary import extract_targets, is_source_path

_ONLY_EN = re.compile(
    r"\b(?:only|just|solely)\s+(?:change|modify|edit|touch|update|fix|patch|alter)\w*\s+(?:the\s+)?(?:files?\s+)?"
    r"|\b(?:change|modify|edit|touch|update|patch|alter)\w*\s+(?:only|just|solely)\s+(?:the\s+)?(?:files?\s+)?"
    r"|\b(?:change|modify|edit|touch)\w*\s+nothing\s+(?:but|except|other\s+than)\s+(?:the\s+)?"
    r"|\blimit\s+(?:your\s+|the\s+|all\s+)?(?:changes|edits)\s+to\s+(?:the\s+)?(?:files?\s+)?"
    r"|\b(?:no\s+other\s+files?|nothing\s+else)\s+(?:may|should|can|must)\s+change\b.{0,40}?",
    re.IGNORECASE)
_ONLY_ZH = re.compile(r"(?:只|仅|只能|只允许|只需|仅需|只许)\s*(?:修改|改动|改|动|编辑|更新|修)\s*(?:一下)?\s*")
_NO_CODE = re.compile(
    r"\b(?:do\s+not|don'?t|never|without|no\s+need\s+to)\s+(?:\w+\s+){0,2}?(?:chang|modif|edit|touch|alter|rewrit|"
    r"writ)\w*\s+(?:any\s+|the\s+)?(?:code|source(?:\s+code)?|implementation)\b"
    r"|\b(?:no|zero)\s+code\s+changes?\b"
    r"|(?:不要|别|不用|无需|不必|勿|禁止|不许|不能|先别|先不要)\s*(?:先)?(?:修改|改动|改|动|碰|写)\s*(?:任何)?\s*(?:代码|源码|程序)",
    re.IGNORECASE)
_NO_CHANGE = re.compile(
    r"\b(?:do\s+not|don'?t|never|without)\s+(?:\w+\s+){0,2}?(?:chang|modif|edit|touch|alter|writ)\w*\s+"
    r"(?:any\s+files?|anything|any\s+of\s+the\s+files|the\s+workspace|the\s+repo(?:sitory)?)\b"
    r"|\b(?:do\s+not|don'?t)\s+make\s+any\s+changes\b|\bread[- ]only\b|\bchange\s+nothing\b"
    r"|(?:不要|别|不许|不能|禁止|勿|先不要)\s*(?:修改|改动|改|动)\s*(?:任何)\s*(?:文件|东西|内容)"
    r"|(?:不要|别|不许|禁止)\s*(?:做|进行)?\s*任何(?:修改|改动)|只读",
    re.IGNORECASE)


@dataclass(frozen=True)
class ChangeConstraints:
    """What the run may change: ``only`` (None: any path), no source files, or nothing at all."""

    only: tuple[str, ...] | None = None
    no_code: bool = False
    no_change: bool = False

    @property
    def any(self) -> bool:
        return self.only is not None or self.no_code or self.no_change


_VERB_BEFORE = re.compile(r"\b(?:change|modify|edit|touch|update|fix|patch|alter)\w*\s+(?:the\s+)?(?:files?\s+)?$"
                          r"|(?:修改|改动|改|动|编辑|更新)\s*$", re.IGNORECASE)


def change_constraints(request: str) -> ChangeConstraints:
    """The change-set constraints ``request`` states (names as the request writes them)."""
    only: list[str] = []
    for name in extract_targets(request):
        for match in re.finditer(re.escape(name), request):
            before, after = request[max(0, match.start() - 40):match.start()], request[match.end():match.end() + 12]
            if _VERB_BEFORE.search(before) and re.match(r"^`?\s*only\b", after, re.IGNORECASE):
                only.append(name)
    for pattern in (_ONLY_EN, _ONLY_ZH):
        for match in pattern.finditer(request):
            named = extract_targets(request[match.end():match.end() + 120].split("\n", 1)[0])
            clause = re.split(r"[;；。!！?？]|\bthen\b|\band\s+(?:then\s+)?(?:run|test|commit)", request[match.end():], maxsplit=1)[0]
            only += [n for n in named if n in clause]
    return ChangeConstraints(tuple(dict.fromkeys(only)) or None, bool(_NO_CODE.search(request)),
                             bool(_NO_CHANGE.search(request)))


def violations(constraints: ChangeConstraints, changed: list[str], resolve: dict[str, str],
               destinations: tuple[str, ...]) -> list[tuple[str, str]]:
    """``(path, which rule)`` for every changed path the constraints forbid.

    ``resolve`` maps a name as the request wrote it to its workspace path; ``destinations`` are files the
    request sends results to, which a constraint never forbids.
    """
    bad: list[tuple[str, str]] = []
    allowed = {resolve.get(n, n) for n in constraints.only or ()} | set(destinations)
    for path in changed:
        if path in destinations:
            continue
        if constraints.no_change:
            bad.append((path, "the request said not to change anything"))
        elif constraints.no_code and is_source_path(path):
            bad.append((path, "the request said not to change any code"))
        elif constraints.only is not None and path not in allowed:
            bad.append((path, f"the request said to change only {', '.join(sorted(allowed))}"))
    return bad


__all__ = ["ChangeConstraints", "change_constraints", "violations"]
