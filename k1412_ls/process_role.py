"""What this process is: a long-lived language server (``lsp``) or a one-shot command (``run``).

Resources a process starts for others to share (a managed llama.cpp server) outlive a ``run`` by an idle
time, but go with a language server when it exits. Set once at start-up, before anything heavy is imported.
"""

from __future__ import annotations

_role = "run"


def set_role(role: str) -> None:
    """``lsp`` in the language server, ``run`` otherwise."""
    global _role
    _role = role


def role() -> str:
    return _role


__all__ = ["role", "set_role"]
