"""Recognising a provider's refusal of a request that is longer than its context window.

Every OpenAI-compatible server says it differently (the shapes below are what
each one sends; the numbers are the ones K1412 learns from):

* **OpenAI** — HTTP 400, ``error.code: "context_length_exceeded"``, message
  ``This model's maximum context length is 8192 tokens. However, your messages
  resulted in 8227 tokens. …`` or ``… However, you requested 4118 tokens (3118
  in the messages, 1000 in the completion). …``; newer models say ``Your input
  exceeds the context window of this model …`` with the same code.
* **DeepSeek** — HTTP 400, ``code: "invalid_request_error"``, message ``This
  model's maximum context length is 131072 tokens. However, you requested
  131134 tokens (122942 in the messages, 8192 in the completion). …``.
* **llama.cpp** (llama-server) — HTTP 400, ``type: "exceed_context_size_error"``
  with ``n_prompt_tokens`` and ``n_ctx`` fields, message ``request (4476 tokens)
  exceeds the available context size (4096 tokens), try increasing it``; older
  builds: ``the request exceeds the available context size, try increasing the
  context size or enable context shift``.
* **vLLM** — HTTP 400, ``type: "BadRequestError"``, message ``This model's
  maximum context length is 4096 tokens. However, your request has 4176 input
  tokens. …`` (older: ``… you requested N tokens (X in the messages, Y in the
  completion)``), or, when the output cap alone is too big, ``'max_tokens' or
  'max_completion_tokens' is too large: 8000. This model's maximum context
  length is 4096 tokens and your request has 2778 input tokens …``.
* **Ollama** — by default it cuts the prompt silently and answers 200 (nothing to
  recognise: K1412's own budget is the only defence, see the README). When it does
  refuse, the body's ``error`` is llama.cpp's object serialised into a string, or
  ``the input length exceeds the context length`` / ``the prompt is longer than the
  context length …``.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from typing import Any

_PHRASES = (
    "maximum context length",
    "context_length_exceeded",
    "context length exceeded",
    "exceed_context_size",
    "exceeds the available context size",
    "exceeds the context window",
    "exceeds the context length",
    "longer than the context length",
    "context window of this model",
)
_NUMBER = r"([0-9][0-9,]*)"
_WINDOW = (
    re.compile(rf"maximum context length is {_NUMBER} tokens", re.I),
    re.compile(rf"available context size \({_NUMBER} tokens\)", re.I),
)
_PROMPT = (
    re.compile(rf"\({_NUMBER} in the messages", re.I),
    re.compile(rf"your messages resulted in {_NUMBER} tokens", re.I),
    re.compile(rf"your request has {_NUMBER} input tokens", re.I),
    re.compile(rf"request \({_NUMBER} tokens\) exceeds", re.I),
)
_COMPLETION = (
    re.compile(rf"{_NUMBER} in the completion", re.I),
    re.compile(rf"max_completion_tokens'? is too large: {_NUMBER}", re.I),
)


@dataclass(frozen=True)
class Overflow:
    """What a context-length refusal stated (None where it did not say)."""

    window_tokens: int | None = None
    prompt_tokens: int | None = None
    completion_tokens: int | None = None


def _number(text: str) -> int | None:
    try:
        return int(text.replace(",", ""))
    except ValueError:
        return None


def _first(patterns: tuple[re.Pattern[str], ...], text: str) -> int | None:
    for pattern in patterns:
        match = pattern.search(text)
        if match:
            return _number(match.group(1))
    return None


def _error_object(body: Any) -> dict[str, Any]:
    """The innermost error object of a body (Ollama nests llama.cpp's error as a JSON string)."""
    current = body
    for _ in range(3):
        if isinstance(current, str) and current.lstrip().startswith("{"):
            try:
                current = json.loads(current)
            except ValueError:
                return {"message": current}
        if isinstance(current, dict) and isinstance(current.get("error"), dict | str):
            current = current["error"]
            continue
        break
    if isinstance(current, dict):
        return current
    return {"message": current} if isinstance(current, str) else {}


def context_overflow(status: int | None, body: Any, message: str) -> Overflow | None:
    """The facts of a context-length refusal, or None when the error is something else.

    ``status`` is the HTTP status (None for an error object inside a 200 reply),
    ``body`` the parsed error body as the SDK kept it, ``message`` the provider's
    message as already extracted.
    """
    if status is not None and status not in (400, 413, 422, 500):
        return None
    error = _error_object(body)
    code = str(error.get("code") or "").lower()
    kind = str(error.get("type") or "").lower()
    text = " ".join(str(part) for part in (message, error.get("message") or "") if part)
    lowered = text.lower()
    recognised = (code == "context_length_exceeded" or kind == "exceed_context_size_error"
                  or any(phrase in lowered for phrase in _PHRASES))
    if not recognised:
        return None
    window = error.get("n_ctx") if isinstance(error.get("n_ctx"), int) else _first(_WINDOW, text)
    prompt = (error.get("n_prompt_tokens") if isinstance(error.get("n_prompt_tokens"), int)
              else _first(_PROMPT, text))
    return Overflow(window_tokens=window, prompt_tokens=prompt, completion_tokens=_first(_COMPLETION, text))


__all__ = ["Overflow", "context_overflow"]
