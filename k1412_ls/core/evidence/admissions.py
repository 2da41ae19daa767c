"""What the answer itself says is not done: "I did not fix sub()", "发布这一步没有做".

Words prove nothing either way, but they can only cost a run its ``completed``: when the model says part of
the requested work was not done, the run is not complete, whatever else it proved. A question's answer is
exempt (a failure found is a finding), and so is restraint the request asked for ("I changed nothing",
"I did not touch the tests"): only verbs of getting the work done count, and not a failure the run got past
("第一次运行仍失败，最终 3 passed" tells a story, not a gap).
"""

from __future__ import annotations

import re

_UNDONE_EN = re.compile(
    r"\b(?:did\s+not|didn't|could\s+not|couldn't|was\s+not\s+able\s+to|wasn't\s+able\s+to|unable\s+to|have\s+not|"
    r"haven't|has\s+not|hasn't|not\s+yet|cannot|can't)\s+(?:\w+\s+){0,2}?(?:fix|fixed|finish|finished|complete|"
    r"completed|implement|implemented|publish|published|upload|uploaded|deploy|deployed|release|released|get\s+to)\b"
    r"|\b(?:is|are|was|were)\s+(?:still\s+)?not\s+(?:done|finished|fixed|implemented|complete|completed)\b"
    r"|\b(?:that|this|the\s+\w+)\s+part\s+(?:is|was)\s+not\s+done\b|\bleft\s+(?:undone|unfinished|unfixed)\b",
    re.IGNORECASE)
_UNDONE_ZH = re.compile(
    r"没有完成|未完成|没完成|(?:这一步|这部分|这一部分|这个部分)?没有做|没做|没有修|没修|未修复|没有修复|还没(?:有)?(?:修|做|完成|实现)"
    r"|无法(?:完成|上传|发布|推送|部署)|没能|未能")


def admits_unfinished(answer: str) -> str | None:
    """The first phrase of ``answer`` that says requested work was not done, or None."""
    match = _UNDONE_EN.search(answer) or _UNDONE_ZH.search(answer)
    return match.group(0) if match else None


__all__ = ["admits_unfinished"]
