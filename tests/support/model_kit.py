"""Shared helpers for the model adapter tests: specs, a scripted server per call, expected failures."""

from __future__ import annotations

from typing import Any

import pytest

from k1412_ls.config import ModelSpec, ProviderSpec
from k1412_ls.core.model_port import ModelError, ModelReply
from k1412_ls.models import OpenAIChatModel
from tests.support.scripted_server import ScriptedServer

PLANTED_KEY = "sk-proj-AbC_dEf-0123456789_ghIJklMNop-qrstUVwx"
USER = [{"role": "user", "content": "write hello.txt"}]
WRITE_TOOL = {
    "type": "function",
    "function": {
        "name": "write_file",
        "description": "Write a file.",
        "parameters": {
            "type": "object",
            "properties": {"path": {"type": "string"}, "content": {"type": "string"}},
            "required": ["path", "content"],
            "additionalProperties": False,
        },
    },
}
LOCAL = ModelSpec(id="luna", provider="local", provider_model="qwen2.5-coder-7b-instruct", max_output_tokens=1234)
LOCAL_THINKING = ModelSpec(
    id="sol", provider="local", provider_model="gpt-oss-20b", thinking=True, reasoning_effort="high"
)
DEEPSEEK = ModelSpec(
    id="deepseek-v4-pro", provider="deepseek", provider_model="deepseek-v4-pro", thinking=True, reasoning_effort="max"
)
STREAM_MODES = pytest.mark.parametrize("stream", [True, False], ids=["stream", "plain"])


def make_model(
    server: ScriptedServer,
    name: str = "local",
    key: str | None = None,
    stream: bool = True,
    retries: int = 0,
    timeout_s: float = 10.0,
) -> OpenAIChatModel:
    env = {"deepseek": "DEEPSEEK_API_KEY", "openai": "OPENAI_API_KEY"}.get(name)
    provider = ProviderSpec(base_url=server.base_url, api_key_env=env, timeout_s=timeout_s, max_retries=retries)
    return OpenAIChatModel(provider, name, key, stream=stream)


async def complete(
    script: list[dict[str, Any]], spec: ModelSpec = LOCAL, tools: list[dict[str, Any]] | None = None, **kw: Any
) -> tuple[ModelReply, ScriptedServer]:
    with ScriptedServer(script) as server:
        model = make_model(server, **kw)
        try:
            reply = await model.complete(USER, tools or [], spec)
        finally:
            await model.aclose()
    return reply, server


async def failure(script: list[dict[str, Any]], spec: ModelSpec = LOCAL, **kw: Any) -> tuple[ModelError, ScriptedServer]:
    with ScriptedServer(script) as server:
        model = make_model(server, **kw)
        try:
            with pytest.raises(ModelError) as caught:
                await model.complete(USER, [WRITE_TOOL], spec)
        finally:
            await model.aclose()
    return caught.value, server
