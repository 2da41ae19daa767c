"""The chat model of a managed provider: starts (or reuses) its llama.cpp server on first use.

It is an :class:`OpenAIChatModel` pointed at the managed server once that server is up; until the
first request nothing runs. A request that fails because the server died says so (and the next
request starts a new server); everything else is the adapter's own handling.
"""

from __future__ import annotations

import asyncio
from typing import Any

from k1412_ls.config import ModelSpec, ProviderSpec
from k1412_ls.core.model_port import ModelError, ModelReply
from k1412_ls.models.managed_llama import ensure_server, server_crash_note
from k1412_ls.models.openai_chat import OpenAIChatModel, request_deadline_s
from k1412_ls.text.redact import Redactor


class ManagedChatModel:
    """A ``ChatModel`` whose endpoint is a llama.cpp server K1412 manages."""

    def __init__(self, provider: ProviderSpec, provider_name: str, *, stream: bool = True,
                 redactor: Redactor | None = None) -> None:
        self.provider = provider
        self.provider_name = provider_name
        self.stream = stream
        self._redactor = redactor
        self._inner: OpenAIChatModel | None = None
        self._port: int | None = None
        self.server: dict[str, Any] | None = None  # the state of the server this model talks to

    @property
    def carries_reasoning(self) -> bool:
        return False

    @property
    def deadline_s(self) -> float:
        return request_deadline_s(self.provider)

    async def _model(self, spec: ModelSpec, tools: bool) -> OpenAIChatModel:
        server = await asyncio.to_thread(ensure_server, self.provider_name, self.provider, spec, tools=tools)
        self.server = server
        if self._inner is None or self._port != server["port"]:
            if self._inner is not None:
                await self._inner.aclose()
            endpoint = self.provider.model_copy(update={"base_url": f"http://127.0.0.1:{server['port']}/v1"})
            self._inner = OpenAIChatModel(endpoint, self.provider_name, None, stream=self.stream,
                                          redactor=self._redactor)
            self._port = int(server["port"])
        return self._inner

    async def complete(self, messages: list[dict[str, Any]], tools: list[dict[str, Any]], spec: ModelSpec) -> ModelReply:
        model = await self._model(spec, bool(tools))
        try:
            return await model.complete(messages, tools, spec)
        except ModelError as exc:
            note = await asyncio.to_thread(server_crash_note, self.provider, spec)
            if not note:
                raise
            error = type(exc)(str(exc) + note)
            error.usage = exc.usage
            for name in ("window_tokens", "prompt_tokens", "completion_tokens"):
                if hasattr(exc, name):
                    setattr(error, name, getattr(exc, name))
            raise error from None

    async def list_models(self) -> list[str]:
        if self._inner is None:
            return []
        return await self._inner.list_models()

    async def aclose(self) -> None:
        if self._inner is not None:
            await self._inner.aclose()
