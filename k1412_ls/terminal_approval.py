"""Asking the user of ``k1412 run`` about a command, on the terminal it was started from.

Only when standard input and standard error are both a terminal; otherwise
(pipes, CI, ``--json`` into a file) nobody is asked and the approval policy
decides (what needs asking is refused, and the model is told why).

The prompt shows the whole command with every control, bidi and format character
visible (k1412_ls/text/lossless.py): a carriage return, backspace or ``ESC[2K ESC[1A``
in the command cannot erase or hide any part of what the user approves.
"""

from __future__ import annotations

import select
import sys
import threading
from typing import TextIO

from k1412_ls.text.lossless import visible
from k1412_ls.tools.approval.approval_policy import ApprovalRequest, Approver, Decision

ANSWER_TIMEOUT_S = 300.0
_lock = threading.Lock()  # one question at a time on one terminal


def terminal_approver(stdin: TextIO | None = None, stderr: TextIO | None = None,
                      timeout_s: float = ANSWER_TIMEOUT_S) -> Approver | None:
    """An approver that prompts on the terminal, or None when this is not an interactive terminal."""
    source = stdin or sys.stdin
    sink = stderr or sys.stderr
    if not (source.isatty() and sink.isatty()):
        return None

    def ask(request: ApprovalRequest, cancel: threading.Event) -> Decision | None:
        with _lock:
            sink.write(prompt_text(request))
            sink.flush()
            waited = 0.0
            while waited < timeout_s and not cancel.is_set():
                ready, _, _ = select.select([source], [], [], 0.2)
                if ready:
                    answer = source.readline().strip().lower()
                    if answer in ("y", "yes"):
                        return Decision.ALLOW_ONCE
                    if answer in ("a", "always") and request.prefix:
                        return Decision.ALLOW_ALWAYS
                    return Decision.DENY
                waited += 0.2
            sink.write("\n(no answer: denied)\n")
            return None

    return ask


def prompt_text(request: ApprovalRequest) -> str:
    """The question as the terminal shows it: the full command, nothing in it interpreted."""
    always = f"a = always allow `{visible(request.prefix_text, keep_lines=False)}`, " if request.prefix else ""
    reasons = visible("; ".join(request.reasons), keep_lines=False)
    return (f"\nK1412 wants to run `{visible(request.command, keep_lines=False)}`: {reasons}. Allow it?\n"
            f"  [y = allow once, {always}N = deny] ")


__all__ = ["prompt_text", "terminal_approver"]
