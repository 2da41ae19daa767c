"""The observation protocol mini-swe-agent uses in every front end: one bash block per step, tagged results.

An assistant turn holds free text and one fenced ```bash block (the action); the reply is
``<returncode>N</returncode>`` then ``<output>…</output>`` (or, for long output, ``<output_head>``,
``<elided_chars>``, ``<output_tail>``). A reply without a return code is a timeout, a format error or
another message from the harness: a timeout is a command that was stopped, a format error means no
command ran.
"""

from __future__ import annotations

import re

from k1412_ls.judge.foreign import Step

_BLOCK = re.compile(r"```(?:bash|sh)[ \t]*\n(.*?)\n```", re.DOTALL)
_RETURN = re.compile(r"<returncode>\s*(-?\d+)\s*</returncode>")
_OUTPUT = re.compile(r"<output>\n?(.*?)\n?</output>", re.DOTALL)
_HEAD = re.compile(r"<output_head>\n?(.*?)\n?</output_head>", re.DOTALL)
_TAIL = re.compile(r"<output_tail>\n?(.*?)\n?</output_tail>", re.DOTALL)
_ELIDED = re.compile(r"<elided_chars>\s*(\d+)")
_TIMEOUT = re.compile(r"timed out|has been killed|TimeoutExpired", re.IGNORECASE)
SUBMIT_WORDS = ("COMPLETE_TASK_AND_SUBMIT_FINAL_OUTPUT", "MINI_SWE_AGENT_FINAL_OUTPUT")


def actions(text: str) -> list[str]:
    """The bash blocks of an assistant turn."""
    return [m.group(1) for m in _BLOCK.finditer(text)]


def thought(text: str) -> str:
    """The free text of an assistant turn (its bash blocks removed)."""
    return _BLOCK.sub("", text).strip()


def observation_step(command: str, reply: str) -> Step | None:
    """The step for ``command`` given the harness's reply; None when the reply says no command ran."""
    code = _RETURN.search(reply)
    if code is None:
        if _TIMEOUT.search(reply):
            return Step("command", "bash", command=command, exit_code=None, output=reply, timed_out=True)
        return None
    output = _OUTPUT.search(reply)
    if output is not None:
        text = output.group(1)
    else:
        head, tail = _HEAD.search(reply), _TAIL.search(reply)
        elided = _ELIDED.search(reply)
        cut = f"\n…[{elided.group(1) if elided else 'some'} characters omitted]…\n"
        text = (head.group(1) if head else "") + cut + (tail.group(1) if tail else "")
    return Step("command", "bash", command=command, exit_code=int(code.group(1)), output=text)


def is_submission(command: str) -> bool:
    """Whether the command is the agent's submit step (it ends the run)."""
    return any(word in command for word in SUBMIT_WORDS)


_DIFF_FILE = re.compile(r"^diff --git a/(\S+) b/(\S+)$", re.MULTILINE)


def diff_files(diff: str) -> tuple[str, ...]:
    """The paths a unified git diff changes (the new name of a renamed file)."""
    return tuple(dict.fromkeys(m.group(2) for m in _DIFF_FILE.finditer(diff)))


def template_task(message: str, template: str, slot: str = "{{task}}") -> str | None:
    """The text a format's own instance template put in its task slot, or None when the message does not fit it.

    The harness wraps the user's request in fixed instructions (how to format actions, how to
    submit); those are the harness's words, not the request, so the gate judges the slot's text.
    """
    if slot not in template:
        return None
    before, _, after = template.partition(slot)
    before, after = before.strip(), after.strip()
    head = before[-200:] if before else ""
    tail = after[:200].split("{{")[0].split("{%")[0] if after else ""
    start = message.find(head) + len(head) if head and head in message else (0 if not head else -1)
    if start < 0:
        return None
    end = message.find(tail, start) if tail else len(message)
    if end < 0:
        return None
    text = message[start:end].strip()
    return text or None
