"""Chat model adapters. ``openai_chat`` is the only module in K1412 that imports ``openai``.

Build the model for a run from configuration with :func:`build_chat_model`.
"""

from __future__ import annotations

from k1412_ls.config import K1412Config, ModelSpec, api_key_for
from k1412_ls.models.managed_chat import ManagedChatModel
from k1412_ls.models.openai_chat import OpenAIChatModel
from k1412_ls.text.redact import Redactor

__all__ = ["ManagedChatModel", "OpenAIChatModel", "build_chat_model"]


def build_chat_model(
    config: K1412Config,
    spec: ModelSpec,
    *,
    stream: bool = True,
    redactor: Redactor | None = None,
) -> OpenAIChatModel | ManagedChatModel:
    """The chat model for ``spec`` under ``config``.

    Raises ``ConfigError`` (one sentence naming the environment variable) when
    the provider needs a key that is not set. A provider without
    ``api_key_env`` sends no key. A managed provider (``managed = true``) gets a model that starts
    its llama.cpp server on the first request.
    """
    provider = config.provider_for(spec)
    if provider.managed:
        return ManagedChatModel(provider, spec.provider, stream=stream, redactor=redactor)
    api_key = api_key_for(provider, spec.provider)
    return OpenAIChatModel(provider, spec.provider, api_key, stream=stream, redactor=redactor)
