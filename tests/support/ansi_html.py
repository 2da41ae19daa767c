"""Render a terminal capture (``tmux capture-pane -e``: text with SGR colour escapes) as an HTML page."""

from __future__ import annotations

import html
import re

_SGR = re.compile(r"\x1b\[([0-9;:]*)m")
_BASE = ["#1e1e1e", "#cd3131", "#0dbc79", "#e5e510", "#2472c8", "#bc3fbc", "#11a8cd", "#e5e5e5",
         "#666666", "#f14c4c", "#23d18b", "#f5f543", "#3b8eea", "#d670d6", "#29b8db", "#ffffff"]
FG, BG = "#d4d4d4", "#1e1e1e"


def _xterm(n: int) -> str:
    if n < 16:
        return _BASE[n]
    if n < 232:
        n -= 16
        steps = [0, 95, 135, 175, 215, 255]
        return f"#{steps[n // 36]:02x}{steps[n // 6 % 6]:02x}{steps[n % 6]:02x}"
    level = 8 + (n - 232) * 10
    return f"#{level:02x}{level:02x}{level:02x}"


def _apply(codes: list[int], state: dict[str, object]) -> None:
    i = 0
    while i < len(codes):
        code = codes[i]
        if code == 0:
            state.update(fg=None, bg=None, bold=False, reverse=False)
        elif code == 1:
            state["bold"] = True
        elif code == 22:
            state["bold"] = False
        elif code == 7:
            state["reverse"] = True
        elif code == 27:
            state["reverse"] = False
        elif 30 <= code <= 37 or 90 <= code <= 97:
            state["fg"] = _BASE[code - 30 if code < 90 else code - 82]
        elif 40 <= code <= 47 or 100 <= code <= 107:
            state["bg"] = _BASE[code - 40 if code < 100 else code - 92]
        elif code == 39:
            state["fg"] = None
        elif code == 49:
            state["bg"] = None
        elif code in (38, 48) and i + 1 < len(codes):
            key = "fg" if code == 38 else "bg"
            if codes[i + 1] == 5 and i + 2 < len(codes):
                state[key] = _xterm(codes[i + 2])
                i += 2
            elif codes[i + 1] == 2 and i + 4 < len(codes):
                state[key] = "#{:02x}{:02x}{:02x}".format(*codes[i + 2:i + 5])
                i += 4
        i += 1


def capture_to_html(capture: str, title: str) -> str:
    """An HTML page showing ``capture`` in a monospace terminal with its colours."""
    state: dict[str, object] = {"fg": None, "bg": None, "bold": False, "reverse": False}
    parts: list[str] = []
    pos = 0
    for match in _SGR.finditer(capture + "\x1b[0m"):
        text = capture[pos:match.start()]
        if text:
            fg, bg = state["fg"] or FG, state["bg"] or BG
            if state["reverse"]:
                fg, bg = bg, fg
            weight = "bold" if state["bold"] else "normal"
            parts.append(f'<span style="color:{fg};background:{bg};font-weight:{weight}">{html.escape(text)}</span>')
        codes = [int(c) for c in re.split(r"[;:]", match.group(1)) if c.isdigit()] or [0]
        _apply(codes, state)
        pos = match.end()
    body = "".join(parts)
    return (f"<!doctype html><meta charset='utf-8'><title>{html.escape(title)}</title>"
            f"<body style='margin:0;background:{BG}'><pre style=\"margin:0;padding:8px;font:14px/1.25 "
            f"'DejaVu Sans Mono',monospace;color:{FG};background:{BG}\">{body}</pre></body>")
