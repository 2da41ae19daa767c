"""The one error a tool raises for a failure the model can act on."""

from __future__ import annotations


class ToolError(Exception):
    """A tool failure the model can act on: one sentence saying what to do next."""
