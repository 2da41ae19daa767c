"""K1412: an accountable coding agent that lives inside a language server."""

__version__ = "0.1.0"
