"""Chat model adapters. ``openai_chat`` is the only module in K1412 that imports ``openai``.

Build the model for a run from configuration with :func:`build_chat_model`.
"""

from __future__ import annotations

from k1412_ls.config import K1412Config, ModelSpec, api_key_for
from k1412_ls.models.openai_chat import OpenAIChatModel
from k1412_ls.text.redact import Redactor

__all__ = ["OpenAIChatModel", "build_chat_model"]


def build_chat_model(
    config: K1412Config,
    spec: ModelSpec,
    *,
    stream: bool = True,
    redactor: Redactor | None = None,
) -> OpenAIChatModel:
    """The chat model for ``spec`` under ``config``.

    Raises ``ConfigError`` (one sentence naming the environment variable) when
    the provider needs a key that is not set. A provider without
    ``api_key_env`` sends no key.
    """
    provider = config.provider_for(spec)
    api_key = api_key_for(provider, spec.provider)
    return OpenAIChatModel(provider, spec.provider, api_key, stream=stream, redactor=redactor)
