"""The chat request body as JSON bytes, each message encoded once per run and reused.

The SDK's ``chat.completions.create`` walks every message of the history through its
typed-dict transform on every request (88 % of a request's cost by request 100 of a long run);
the body it finally sends is plain JSON. :class:`BodyEncoder` builds the same JSON: each
message's encoding is kept while the window holds that very dict object, and a request costs
one lookup per message plus a join of bytes.

The context window never changes a message in place: it appends copies and replaces a message
it cuts or elides with a new dict (``k1412_ls.core.window``). As a guard, a message is encoded
again when its content or tool calls were replaced, or a field added or removed, since it was
encoded.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from typing import Any

_Shape = tuple[int, int, int]


_LONE_SURROGATE = re.compile("[\ud800-\udfff]")


def _dumps(value: Any) -> bytes:
    # The SDK's own settings (openai._utils._json.openapi_dumps), which follow httpx's.
    text = json.dumps(value, ensure_ascii=False, separators=(",", ":"), allow_nan=False)
    try:
        return text.encode("utf-8")
    except UnicodeEncodeError:
        # A lone surrogate (a model's reply, a file name that is not UTF-8) cannot be UTF-8: it goes as
        # its JSON escape, which is the same string to the provider, instead of failing the request.
        return _LONE_SURROGATE.sub(lambda m: f"\\u{ord(m.group()):04x}", text).encode("utf-8")


def _shape(message: Mapping[str, Any]) -> _Shape:
    """What a change in place would alter: the content or tool-call objects, or the number of fields."""
    return id(message.get("content")), id(message.get("tool_calls")), len(message)


class BodyEncoder:
    """Encodes request bodies for one model client; remembers the messages of the last request."""

    def __init__(self) -> None:
        self._messages: dict[int, tuple[Mapping[str, Any], _Shape, bytes]] = {}
        self._tools: tuple[list[dict[str, Any]], tuple[int, ...], bytes] | None = None
        self.encoded = 0  # messages encoded so far (the rest were reused)

    def encode(self, params: Mapping[str, Any]) -> bytes:
        """``params`` (``messages``, ``tools`` and the other body fields) as the JSON the SDK would send."""
        parts = [b'{"messages":[', b",".join(self._message_bytes(params.get("messages") or [])), b"]"]
        tools = params.get("tools")
        if tools:
            parts += [b',"tools":', self._tool_bytes(tools)]
        for key, value in params.items():
            if key not in ("messages", "tools"):
                parts += [b",", _dumps(key), b":", _dumps(value)]
        parts.append(b"}")
        return b"".join(parts)

    def _message_bytes(self, messages: list[dict[str, Any]]) -> list[bytes]:
        kept: dict[int, tuple[Mapping[str, Any], _Shape, bytes]] = {}
        out = []
        for message in messages:
            key = id(message)
            entry = kept.get(key) or self._messages.get(key)
            shape = _shape(message)
            if entry is None or entry[0] is not message or entry[1] != shape:
                entry = (message, shape, _dumps(message))
                self.encoded += 1
            kept[key] = entry  # holding the dict keeps its id from being reused by another one
            out.append(entry[2])
        self._messages = kept  # messages the window dropped are forgotten with it
        return out

    def _tool_bytes(self, tools: list[dict[str, Any]]) -> bytes:
        shape = tuple(id(tool) for tool in tools)
        if self._tools is None or self._tools[0] is not tools or self._tools[1] != shape:
            self._tools = (tools, shape, _dumps(tools))
        return self._tools[2]
