"""Files each part of a request asks to change: "rename it in api.py and cli.py", "修 calc.py，并在
test_calc.py 里加一个测试", "顺便在 CHANGELOG.md 里记一笔".

A request is split into its clauses (sentences, commas, "then", "并"/"顺便"/"然后" …). Every file named in a
clause that asks for a change — unless the clause names it as what the change works from or what calls the
code ("which main.py calls", "用到的") — must itself change: a run that changed one of two files named that way
did part of the work. Files named in clauses that ask for no change (a question, "run", "check") owe nothing
here, so context never becomes an obligation.
"""

from __future__ import annotations

import re
from collections.abc import Callable

# "and" ends a clause unless it joins two files ("in api.py and cli.py" is one place list).
_CLAUSES = re.compile(r"[，,;；!！?？。\n]|\.(?=\s|$)|\b(?:and\s+then|then|also)\b|\band\b(?!\s+(?:the\s+)?[\w./-]+\.\w{1,8}\b)"
                      r"|然后|并且|并|顺便|同时|另外|再")
_QUOTED_COMMAND = re.compile(r"`[^`\n]*\s[^`\n]*`")
# Before a file: it is context (what calls the code, what it is like) or the tool of the work (run it, with it).
_RELATED = re.compile(r"(?:\bwhich|\bthat|\bwho|\bwhere|\bcalls?|\bcalled|\bimports?|\buses?|\bused\s+by|\blike|"
                      r"\bsee|\bwith|\busing|\bvia|\brun(?:ning)?|\bexecute|\bcheck\s+with|调用|引用|导入|使用|用到|依赖|"
                      r"参考|参照|像|用|通过|跑一下|跑|运行|执行)\s*(?:\S+\s*){0,3}$", re.IGNORECASE)
# A clause that reports a state ("data.csv 已更新", "config.py was updated") asks for nothing.
_REPORTED = re.compile(r"已经?|\b(?:has|have)\s+been\b|\bwas\s+\w+ed\b|\balready\b|\bis\s+now\b", re.IGNORECASE)


def each_changed(request: str, targets: tuple[str, ...], named: tuple[str, ...],
                 asks_change: Callable[[str], bool]) -> tuple[str, ...]:
    """The targets (``named`` as the request writes them, ``targets`` as resolved) that a change clause names."""
    by_name = dict(zip(named, targets, strict=True))
    found: list[str] = []
    request = _QUOTED_COMMAND.sub(" ", request)  # "rebuild with `node build.js`": build.js is the tool, not a place
    for clause in _CLAUSES.split(request):
        present = [n for n in named if n in clause]
        if not present or not asks_change(clause) or _REPORTED.search(clause):
            continue
        for name in present:
            before = clause[:clause.index(name)]
            if not _RELATED.search(before[-30:]):
                found.append(by_name[name])
    return tuple(dict.fromkeys(found))




_FUNCTION_REF = re.compile(r"`?\b([A-Za-z_][A-Za-z0-9_]*)\(\)`?")


def named_functions(request: str) -> tuple[str, ...]:
    """Functions the request names as ``name()`` (what each part of the work is about)."""
    return tuple(dict.fromkeys(m.group(1) for m in _FUNCTION_REF.finditer(request)))


def unchecked_functions(functions: tuple[str, ...], checks: list[str]) -> list[str]:
    """Of several named functions, those no check names when the checks name some of them by hand: a run
    that checked ``add`` by name and never ``sub`` checked part of the work."""
    if len(functions) < 2:
        return []
    named = [f for f in functions if any(re.search(rf"\b{re.escape(f)}\b", c) for c in checks)]
    return [f for f in functions if f not in named] if named else []


__all__ = ["each_changed", "named_functions", "unchecked_functions"]
