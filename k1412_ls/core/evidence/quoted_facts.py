"""Text an answer quotes as what it found ("the last commit is 'fix login redirect'") must be text the run saw.

An answer to a question may quote what a command printed; a quote that appears in no output of the run, in
nothing the run wrote and not in the request was not found, it was made up. The rule judges only answers
the run's own outputs could have shown: when the run also read files or searched (whose content the ledger
does not hold), a quote may come from there, and this rule says nothing.
"""

from __future__ import annotations

import re

from k1412_ls.core.evidence.ledger import LookEntry, RunEntry

_QUOTES = re.compile(r"'([^'\n]{3,120})'|\"([^\"\n]{3,120})\"|`([^`\n]{3,120})`|“([^”\n]{3,120})”|「([^」\n]{3,120})」")


def unseen_quotes(answer: str, request: str, runs: list[RunEntry], looks: list[LookEntry]) -> list[str]:
    """Quotes of ``answer`` no output of ``runs`` contains (empty when reads could be their source)."""
    if any(look.kind in ("read", "search") or look.tool in ("read_file", "search_files", "git_diff", "git_log")
           for look in looks):
        return []
    seen = "\n".join(f"{r.command}\n{r.output}" for r in runs) + "\n" + request  # what ran, and what it printed
    unseen: list[str] = []
    for match in _QUOTES.finditer(answer):
        quote = next(g for g in match.groups() if g)
        if quote not in seen and quote.strip() not in seen:
            unseen.append(quote)
    return unseen


__all__ = ["unseen_quotes"]
