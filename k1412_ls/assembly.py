"""Assemble the runtime the adapters share: configuration + catalogue + model factory + state store.

Lives outside ``core`` because it wires in the openai-backed model factory. The CLI, the language
server and the experiment workers all build their runtime here.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from pathlib import Path

    from k1412_ls.config import K1412Config
    from k1412_ls.core.runtime import Runtime
    from k1412_ls.tools.registry import ToolSource


def build_runtime(config: K1412Config, *, home: Path | None = None, state_store: bool = True) -> Runtime:
    """The runtime for ``config``, with its state in ``home`` (default: the state directory).

    ``state_store=False`` leaves out the store of memories, plans and conversations (an experiment's
    runs must not remember each other). StateError if the store is unusable.
    """
    from k1412_ls.catalog import default_registry
    from k1412_ls.core.runtime import Runtime
    from k1412_ls.locations import state_dir
    from k1412_ls.models import build_chat_model
    from k1412_ls.state.store import StateStore

    home = state_dir() if home is None else home
    store = StateStore(home / "k1412.sqlite3") if state_store else None
    registry = default_registry()
    return Runtime(config, build_chat_model, home, registry, store,
                   tool_sources=mcp_sources(config, frozenset(registry.names())))


def mcp_sources(config: K1412Config, reserved: frozenset[str]) -> tuple[ToolSource, ...]:
    """The user's MCP servers as a run's tool source (the mcp SDK is imported only when one is configured)."""
    if not any(spec.enabled for spec in config.mcp.servers.values()):
        return ()
    try:
        from k1412_ls.tools.mcp.source import McpToolSource
    except ImportError as exc:
        from k1412_ls.locations import ConfigError

        raise ConfigError(f"MCP servers are configured ([mcp.servers] in {config.source}) but the mcp package "
                          f"cannot be loaded ({exc}); install it with pip install 'mcp>=2.3,<3'.") from None
    return (McpToolSource(config.mcp, reserved),)
