"""The chat model adapter over the official ``openai`` SDK (the only module that imports it).

One class, :class:`OpenAIChatModel`, implements the ``ChatModel`` port for
every OpenAI-compatible endpoint: OpenAI, DeepSeek and local servers
(llama.cpp's llama-server, Ollama, vLLM).

Provider differences it handles, and why (from each provider's documentation):

* **Request body.** Every request is ``model``, ``messages``, an output cap,
  and with tools ``tools`` plus ``tool_choice: "auto"``; streamed requests add
  ``stream_options: {"include_usage": true}``, which OpenAI, DeepSeek, Ollama,
  llama.cpp and vLLM all accept. Nothing else is sent: no ``temperature``
  (OpenAI reasoning models refuse it, DeepSeek ignores it in thinking mode),
  no ``parallel_tool_calls`` (DeepSeek and Ollama do not document it). Ollama
  ignores ``tool_choice``; vLLM refuses ``"auto"`` (HTTP 400) unless started
  with ``--enable-auto-tool-choice --tool-call-parser NAME``, and its message
  says so.
* **Output cap.** OpenAI deprecated ``max_tokens`` in favour of
  ``max_completion_tokens`` (reasoning models refuse ``max_tokens``);
  DeepSeek documents ``max_tokens``, Ollama only ``max_tokens``, and
  llama.cpp and vLLM accept it. So OpenAI (provider ``openai`` or host
  ``api.openai.com``) gets ``max_completion_tokens``; every other provider
  gets ``max_tokens``.
* **Thinking.** ``reasoning_effort`` is sent only for models whose spec says
  ``thinking`` and names an effort (OpenAI reasoning models, DeepSeek
  ``low``/``high``/``max``, Ollama ``low``/``medium``/``high``/``none``,
  llama.cpp and vLLM pass it to the chat template, e.g. gpt-oss). DeepSeek's
  thinking mode is switched with ``extra_body={"thinking": {"type":
  "enabled"|"disabled"}}`` (it defaults to enabled, so a non-thinking DeepSeek
  model turns it off explicitly).
* **Reasoning carried back.** DeepSeek requires the ``reasoning_content`` of
  assistant tool-call turns to be passed back in later requests (HTTP 400
  otherwise), so :attr:`OpenAIChatModel.carries_reasoning` is True for it; the
  loop puts it back only into those assistant messages and never publishes it.
  A DeepSeek thinking tool-call turn that came without reasoning carries ``""``
  so the field is still present.
* **Replies** are assembled and validated by :mod:`k1412_ls.models.reply`
  (every provider's streaming shape, ids, reasoning fields, usage); an error
  object arriving where a chunk or body should be (vLLM's
  ``{"object": "error"}``, a mid-stream ``{"error": ...}``) is a ModelError.
* **No key.** A provider without ``api_key_env`` sends no ``Authorization``
  header at all. The SDK refuses to construct a client without a key (and
  would silently fall back to ``$OPENAI_API_KEY``, leaking it to a local
  server), so the client gets a placeholder and every request omits the
  header explicitly. Non-OpenAI hosts never receive ``OpenAI-Organization`` or
  ``OpenAI-Project`` headers from the environment either.
* **Retries.** Only the SDK retries (``max_retries``: 408/409/429/5xx with
  backoff, honouring ``Retry-After`` up to 120 s). The adapter adds no retry
  layer; it bounds each call with a deadline of
  ``timeout_s * (max_retries + 1) + max_retries * 120 s + 5 s``.
* **Errors** become one sanitized line in :class:`ModelError`: never headers,
  never exception attributes (``e.response.request.headers`` holds the raw
  key), provider text cut to 200 characters and redacted with the key added.
  A refusal for length (each provider's shape in :mod:`k1412_ls.models.overflow`)
  is a :class:`ContextOverflow` carrying the window and counts the provider
  stated, so the loop can shrink the context and retry.
"""

from __future__ import annotations

import asyncio
import json
import re
from typing import Any
from urllib.parse import urlsplit

import openai

from k1412_ls.config import ModelSpec, ProviderSpec
from k1412_ls.core.model_port import ContextOverflow, MalformedReply, ModelError, ModelReply
from k1412_ls.models.overflow import Overflow, context_overflow
from k1412_ls.models.reply import (
    NOT_A_COMPLETION,
    StreamAssembler,
    describe_invalid_json,
    describe_json,
    describe_non_completion,
    describe_text,
    is_completion_chunk,
    json_cut_off,
    reply_from_completion,
    stream_error_of,
)
from k1412_ls.models.request_body import BodyEncoder
from k1412_ls.text.redact import Redactor

# The SDK honours a server's Retry-After up to this many seconds (openai._constants).
_MAX_RETRY_AFTER_S = 120.0
_DEADLINE_SLACK_S = 5.0
_NO_KEY_PLACEHOLDER = "k1412-no-key"  # never sent: the Authorization header is omitted per request
_MESSAGE_LIMIT = 200
# Keyword arguments of ``chat.completions.create`` that are request options, not body fields.
_OPTION_KEYS = ("extra_headers", "extra_body")

_STATUS_LABELS = {
    400: "bad request",
    401: "authentication failed",
    402: "payment required",
    403: "permission denied",
    404: "not found",
    408: "request timeout",
    409: "conflict",
    413: "request too large",
    422: "unprocessable request",
    429: "rate limited",
}


def host_of(base_url: str) -> str:
    """The lower-case host name of a base URL ('' if it has none)."""
    return (urlsplit(base_url).hostname or "").lower()


def is_openai(provider_name: str, provider: ProviderSpec) -> bool:
    """OpenAI itself, by name or by host."""
    return provider_name == "openai" or host_of(provider.base_url) == "api.openai.com"


def is_deepseek(provider_name: str, provider: ProviderSpec) -> bool:
    """DeepSeek by name or by host (a renamed provider pointing at DeepSeek still needs its protocol)."""
    host = host_of(provider.base_url)
    return provider_name == "deepseek" or host == "deepseek.com" or host.endswith(".deepseek.com")


def max_tokens_field(provider_name: str, provider: ProviderSpec) -> str:
    """``max_completion_tokens`` for OpenAI itself, ``max_tokens`` for everyone else (see module doc)."""
    return "max_completion_tokens" if is_openai(provider_name, provider) else "max_tokens"


def request_deadline_s(provider: ProviderSpec) -> float:
    """The longest one ``complete`` call may take, SDK retries and their backoff included."""
    retries = provider.max_retries
    return provider.timeout_s * (retries + 1) + retries * _MAX_RETRY_AFTER_S + _DEADLINE_SLACK_S


class OpenAIChatModel:
    """A ``ChatModel`` backed by ``openai.AsyncOpenAI`` for one configured provider."""

    def __init__(
        self,
        provider: ProviderSpec,
        provider_name: str,
        api_key: str | None,
        *,
        stream: bool = True,
        redactor: Redactor | None = None,
    ) -> None:
        self.provider = provider
        self.provider_name = provider_name
        self.stream = stream
        self._has_key = bool(api_key)
        self._seen_call_ids: set[str] = set()  # tool-call ids already handed out: a repeat gets a fresh id
        self._body = BodyEncoder()  # each message is encoded once while the window holds it
        self._partial: StreamAssembler | None = None  # the stream being read, for the usage of a failed reply
        self._redactor = redactor or Redactor.from_environment()
        if api_key:
            self._redactor.add(api_key)
        self._client = openai.AsyncOpenAI(
            base_url=provider.base_url,
            api_key=api_key or _NO_KEY_PLACEHOLDER,
            timeout=provider.timeout_s,
            max_retries=provider.max_retries,
        )

    @property
    def carries_reasoning(self) -> bool:
        """True for DeepSeek, which needs ``reasoning_content`` back on tool-call turns."""
        return is_deepseek(self.provider_name, self.provider)

    @property
    def deadline_s(self) -> float:
        return request_deadline_s(self.provider)

    def request_params(self, messages: list[dict[str, Any]], tools: list[dict[str, Any]], spec: ModelSpec) -> dict[str, Any]:
        """The keyword arguments for ``chat.completions.create`` (public so callers can inspect them)."""
        params: dict[str, Any] = {"model": spec.provider_model, "messages": messages}
        if tools:
            params["tools"] = tools
            params["tool_choice"] = "auto"
        params[max_tokens_field(self.provider_name, self.provider)] = spec.max_output_tokens
        if spec.thinking and spec.reasoning_effort:
            params["reasoning_effort"] = spec.reasoning_effort
        if is_deepseek(self.provider_name, self.provider):
            params["extra_body"] = {"thinking": {"type": "enabled" if spec.thinking else "disabled"}}
        if self.stream:
            params["stream"] = True
            params["stream_options"] = {"include_usage": True}
        headers: dict[str, Any] = {}
        if not self._has_key:
            headers["Authorization"] = openai.Omit()
        if not is_openai(self.provider_name, self.provider):
            headers["OpenAI-Organization"] = openai.Omit()
            headers["OpenAI-Project"] = openai.Omit()
        if headers:
            params["extra_headers"] = headers
        return params

    async def complete(self, messages: list[dict[str, Any]], tools: list[dict[str, Any]], spec: ModelSpec) -> ModelReply:
        """Send one chat request and return a validated reply; raise ModelError/MalformedReply otherwise."""
        params = self.request_params(messages, tools, spec)
        self._partial = None
        try:
            reply = await asyncio.wait_for(self._request(params), timeout=self.deadline_s)
        except ModelError as exc:
            if exc.usage is None and self._partial is not None and self._partial.usage.total:
                exc.usage = self._partial.usage
            raise
        except Exception as exc:
            error = self._translate(exc)
            if error.usage is None and self._partial is not None and self._partial.usage.total:
                error.usage = self._partial.usage  # a stream that broke after its usage chunk still cost it
        else:
            if self.carries_reasoning and spec.thinking and reply.tool_calls and reply.reasoning_content is None:
                reply.reasoning_content = ""  # DeepSeek wants the field back on every thinking tool-call turn
            return reply
        # Raised outside the handler so the SDK exception (whose request headers hold the
        # raw key) is not even kept as __context__ of what the loop sees.
        raise error

    def _translate(self, exc: Exception) -> ModelError:
        """One sanitized ModelError for any failure of a request."""
        name = self.provider_name
        if isinstance(exc, TimeoutError):
            return ModelError(
                f"The provider '{name}' timed out after {self.deadline_s:g} s (all attempts included); "
                "try again later or raise timeout_s."
            )
        if isinstance(exc, json.JSONDecodeError):
            if not json_cut_off(exc.doc, exc.pos, exc.msg):
                return self._not_a_completion(describe_invalid_json(self._redactor.text(exc.doc)))
            return MalformedReply(
                f"The provider '{name}' sent a reply that was cut off (incomplete JSON body); nothing was run."
            )
        if isinstance(exc, UnicodeDecodeError):
            return self._not_a_completion("binary data that is not UTF-8 text")
        if isinstance(exc, openai.APIStatusError):
            overflow = context_overflow(exc.status_code, exc.body, _error_message(exc))
            if overflow is not None:
                return self._overflow(overflow, _error_message(exc), f"HTTP {exc.status_code}")
            return ModelError(self._status_line(exc))
        if isinstance(exc, openai.APITimeoutError):
            attempts = _attempts(exc)
            return ModelError(
                f"The provider '{name}' timed out after {self.provider.timeout_s:g} s per attempt "
                f"({_plural(attempts, 'attempt')}); try again later or raise timeout_s."
            )
        if isinstance(exc, openai.APIConnectionError):
            return ModelError(self._connection_line(exc))
        if isinstance(exc, openai.APIError):
            overflow = context_overflow(None, exc.body, exc.message)  # an error event mid-stream
            if overflow is not None:
                return self._overflow(overflow, exc.message, "mid-reply")
            return ModelError(f"The provider '{name}' reported an error: {self._clean(exc.message)}")
        # Transport errors raised mid-stream are not wrapped by the SDK.
        return ModelError(self._unexpected_line(exc))

    async def _create(self, params: dict[str, Any]) -> Any:
        """``chat.completions.create(**params)`` with the body encoded by :class:`BodyEncoder`.

        The SDK's documented way to send a request it does not shape itself (``client.post``);
        the answer is parsed by the same classes ``create`` uses.
        """
        fields = {key: value for key, value in params.items() if key not in _OPTION_KEYS}
        fields.update(params.get("extra_body") or {})
        options: dict[str, Any] = {"security": {"bearer_auth": True}}  # as create(): no admin key, ever
        if params.get("extra_headers"):
            options["headers"] = params["extra_headers"]
        return await self._client.post(
            "/chat/completions", content=self._body.encode(fields), options=options,  # type: ignore[arg-type]
            cast_to=openai.types.chat.ChatCompletion, stream=bool(params.get("stream")),
            stream_cls=openai.AsyncStream[openai.types.chat.ChatCompletionChunk])

    async def _request(self, params: dict[str, Any]) -> ModelReply:
        if not params.get("stream"):
            completion = await self._create(params)
            self._raise_error_object(completion, "instead of a reply")
            what = describe_non_completion(self._redactor.text(completion) if isinstance(completion, str)
                                           else completion)
            if what is not None:
                raise self._not_a_completion(what)
            return reply_from_completion(completion, self._seen_call_ids)
        stream = await self._create(params)
        content_type = str(stream.response.headers.get("content-type", ""))
        if "html" in content_type.lower():
            # A page, not an event stream (other types are left to the SDK: some servers mislabel theirs).
            try:
                body = await stream.response.aread()
            finally:
                await stream.close()
            return self._reply_from_body(body, content_type)
        assembler = self._partial = StreamAssembler()
        completion_chunks = events = 0
        try:
            async for chunk in stream:
                events += 1
                self._raise_error_object(chunk, "mid-reply")
                completion_chunks += is_completion_chunk(chunk)
                assembler.add(chunk)
        except json.JSONDecodeError as exc:
            if json_cut_off(exc.doc, exc.pos, exc.msg):
                raise
            shown = describe_invalid_json(self._redactor.text(exc.doc))
            raise self._not_a_completion(f"an event stream whose data is {shown}") from None
        finally:
            await stream.close()
        if not completion_chunks:
            kind = content_type.split(";")[0].strip() or "untyped"
            if kind.lower() == "text/event-stream" and not events:
                # An event stream that closed before its first event (llama.cpp sends only ": ping"
                # comments while it reads the prompt): the server went away mid-request.
                raise ModelError(
                    f"The provider '{self.provider_name}' closed its event stream before sending any reply "
                    "(at most keep-alive comments arrived): the server stopped or crashed during the request; "
                    "nothing was run. Check that the server is still running (its log says why it stopped)."
                )
            raise self._not_a_completion(f"a {kind} response without chat completion chunks")
        return assembler.reply(self._seen_call_ids)

    def _reply_from_body(self, body: bytes, content_type: str) -> ModelReply:
        """A whole body where an event stream was asked for: always a ModelError naming what it was."""
        text = self._redactor.text(body.decode("utf-8", "replace"))
        try:
            data = json.loads(body)
        except (ValueError, RecursionError):
            raise self._not_a_completion(describe_text(text, content_type)) from None
        if isinstance(data, dict):
            self._raise_error_object(openai.types.chat.ChatCompletion.construct(**data), "instead of a reply")
        raise self._not_a_completion(describe_json(data) or "a whole JSON body where an event stream was asked for")

    def _not_a_completion(self, what: str) -> ModelError:
        """The one sentence for a 200 reply that is no chat completion (a page, text, other JSON)."""
        return ModelError(
            f"The provider {NOT_A_COMPLETION}: {self._redactor.text(what)} (provider '{self.provider_name}'); "
            f"nothing was run, check its base_url (usually ending in /v1) and that it serves chat completions."
        )

    def _raise_error_object(self, obj: Any, where: str) -> None:
        """Raise a ModelError when the provider sent an error object where a reply should be."""
        message = stream_error_of(obj)
        if message is not None:
            overflow = context_overflow(None, message, message)
            if overflow is not None:
                raise self._overflow(overflow, message, where)
            raise ModelError(
                f"The provider '{self.provider_name}' reported an error {where}: {self._clean(message)} "
                "Nothing was run."
            )

    def _overflow(self, facts: Overflow, message: str, where: str) -> ContextOverflow:
        """The provider said the request is longer than its window (see :mod:`k1412_ls.models.overflow`)."""
        return ContextOverflow(
            f"The provider '{self.provider_name}' refused the request as longer than its context window "
            f"({where}): {self._clean(message)}",
            window_tokens=facts.window_tokens, prompt_tokens=facts.prompt_tokens,
            completion_tokens=facts.completion_tokens,
        )

    async def list_models(self) -> list[str]:
        """Model ids the endpoint serves (``GET /models``), for diagnostics."""
        extra = {"Authorization": openai.Omit()} if not self._has_key else None
        try:
            page = await asyncio.wait_for(self._client.models.list(extra_headers=extra), timeout=self.deadline_s)
        except Exception as exc:
            error = self._translate(exc)
        else:
            return [model.id for model in page.data]
        raise error

    async def aclose(self) -> None:
        """Close the HTTP connection pool."""
        await self._client.close()

    # -- error lines --------------------------------------------------------
    def _clean(self, text: str) -> str:
        """One redacted line of at most 200 characters."""
        line = re.sub(r"\s+", " ", self._redactor.text(str(text))).strip()
        line = self._redactor.text(line[:_MESSAGE_LIMIT])  # re-check: the cut may split a pattern's context
        return line.rstrip(".") + "."

    def _status_line(self, exc: openai.APIStatusError) -> str:
        status = exc.status_code
        label = _STATUS_LABELS.get(status, "server error" if status >= 500 else "error")
        name = self.provider_name
        detail = self._clean(_error_message(exc))
        if status in (401, 403):
            if self.provider.api_key_env:
                hint = f"check {self.provider.api_key_env}"
            else:
                hint = "this provider sends no key; set api_key_env for it in the configuration"
            return f"The provider '{name}' answered HTTP {status} ({label}); {hint}."
        if status == 402:
            return f"The provider '{name}' answered HTTP 402 (payment required): {detail} Check the account's balance."
        attempts = _attempts(exc)
        if status in (408, 409, 429) or status >= 500:
            return f"HTTP {status} ({label}) from provider '{name}' after {_plural(attempts, 'attempt')}: {detail}"
        if status == 404:
            return f"The provider '{name}' answered HTTP 404 (not found): {detail} Check base_url and the model id."
        return f"The provider '{name}' refused the request with HTTP {status} ({label}): {detail}"

    def _connection_line(self, exc: openai.APIConnectionError) -> str:
        reason = _connection_reason(exc)
        url = self.provider.base_url
        if host_of(url) in ("127.0.0.1", "localhost", "::1", "0.0.0.0"):
            advice = "is the local server running?"
        else:
            advice = "check the network and base_url."
        return f"Could not connect to {self._redactor.text(url)} ({reason}); {advice}"

    def _unexpected_line(self, exc: Exception) -> str:
        kind = type(exc).__name__
        if "timeout" in kind.lower():
            return f"The provider '{self.provider_name}' stopped answering mid-reply (timed out); nothing was run."
        if "protocol" in kind.lower() or "read" in kind.lower():
            return f"The connection to provider '{self.provider_name}' broke mid-reply ({kind}); nothing was run."
        return f"The request to provider '{self.provider_name}' failed ({kind}): {self._clean(str(exc))}"


def _error_message(exc: openai.APIStatusError) -> str:
    """The provider's own error message from the body, never from headers or the request."""
    body = exc.body
    if isinstance(body, dict):
        inner = body.get("error", body)
        if isinstance(inner, dict) and isinstance(inner.get("message"), str):
            return inner["message"]
        if isinstance(inner, str):
            return inner
        if isinstance(body.get("message"), str):
            return body["message"]
    if isinstance(body, str) and body.strip():
        return body
    return f"HTTP {exc.status_code} with no error message"


def _plural(count: int, noun: str) -> str:
    return f"{count} {noun}{'' if count == 1 else 's'}"


def _attempts(exc: openai.APIError) -> int:
    """How many attempts the SDK made: it numbers retries in the x-stainless-retry-count header."""
    try:
        return int(exc.request.headers.get("x-stainless-retry-count", "0")) + 1
    except (AttributeError, ValueError):
        return 1


def _connection_reason(exc: BaseException) -> str:
    """A short reason from the exception chain: refused, DNS, TLS, reset."""
    seen: set[int] = set()
    current: BaseException | None = exc
    text = ""
    while current is not None and id(current) not in seen:
        seen.add(id(current))
        if isinstance(current, ConnectionRefusedError):
            return "connection refused"
        text += f" {type(current).__name__} {current}".lower()
        current = current.__cause__ or current.__context__
    for needle, reason in (
        ("connection refused", "connection refused"),
        ("errno 111", "connection refused"),
        ("name or service not known", "host name not found"),
        ("nodename nor servname", "host name not found"),
        ("temporary failure in name resolution", "host name not found"),
        ("certificate", "TLS certificate problem"),
        ("ssl", "TLS error"),
        ("reset by peer", "connection reset"),
        ("network is unreachable", "network unreachable"),
    ):
        if needle in text:
            return reason
    return "connection error"
