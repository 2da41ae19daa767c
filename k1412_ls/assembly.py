"""Assemble the runtime the adapters share: configuration + catalogue + model factory + state store.

Lives outside ``core`` because it wires in the openai-backed model factory.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from k1412_ls.config import K1412Config
    from k1412_ls.core.runtime import Runtime


def build_runtime(config: K1412Config) -> Runtime:
    """The runtime for ``config``, with its state in the state directory (StateError if unusable)."""
    from k1412_ls.catalog import default_registry
    from k1412_ls.core.runtime import Runtime
    from k1412_ls.locations import state_dir
    from k1412_ls.models import build_chat_model
    from k1412_ls.state.store import StateStore

    home = state_dir()
    return Runtime(config, build_chat_model, home, default_registry(), StateStore(home / "k1412.sqlite3"))
