"""Configuration: one fully defaulted pydantic tree, loaded once from TOML.

Search order: ``--config FILE``, ``$K1412_CONFIG``,
``<workspace>/.k1412/config.toml``, ``$XDG_CONFIG_HOME/k1412/config.toml``;
built-in defaults otherwise. A file can add or override providers and models.
"""

from __future__ import annotations

import os
import re
import tomllib
from pathlib import Path
from typing import Annotated, Any, Literal

from pydantic import (
    BaseModel,
    ConfigDict,
    Field,
    StringConstraints,
    ValidationError,
    field_validator,
    model_validator,
)

from k1412_ls.limits import LIMITS
from k1412_ls.locations import ConfigError, find_config_file, state_dir
from k1412_ls.pricing import DEEPSEEK_V4_PRO, FREE, Pricing, Rates
from k1412_ls.workspace_policy import apply_workspace_rules


class ProviderSpec(BaseModel):
    """An OpenAI-compatible endpoint."""

    model_config = ConfigDict(extra="forbid")

    base_url: str = ""
    api_key_env: str | None = None
    timeout_s: float = Field(default=120.0, gt=0)
    max_retries: int = Field(default=2, ge=0, le=10)
    # A managed local server (k1412_ls/models/managed_llama.py): K1412 starts llama.cpp's server with this
    # GGUF on first use and stops it when idle; base_url is then the server's own.
    managed: bool = False
    gguf: str | None = None
    chat_template: str | None = None
    idle_s: float = Field(default=300.0, gt=0)

    @model_validator(mode="after")
    def _endpoint(self) -> ProviderSpec:
        if self.managed and not self.gguf:
            raise ValueError("a managed provider needs gguf = PATH (the model file llama.cpp serves)")
        if not self.managed and not self.base_url:
            raise ValueError("a provider needs base_url (or managed = true with gguf = PATH)")
        return self


class ModelSpec(BaseModel):
    """The single source of truth for one model the agent can use."""

    model_config = ConfigDict(extra="forbid")

    id: str = ""
    provider: str
    provider_model: str
    thinking: bool = False
    thinking_label: str = ""
    reasoning_effort: str | None = None
    max_output_tokens: int = Field(default=4096, gt=0)
    max_iterations: int = Field(default=30, gt=0, le=1000)
    context_chars: int = Field(default=120_000, gt=0)
    # None: unpriced (cost is reported as unknown, never guessed).
    pricing: Pricing | None = None


class BudgetSpec(BaseModel):
    """Per-run limits (``[budget]``); ``k1412 run --max-cost/--max-tokens`` override them."""

    model_config = ConfigDict(extra="forbid")

    max_cost: float | None = Field(default=None, gt=0)
    max_tokens: int | None = Field(default=None, gt=0)


BUILTIN_PROVIDERS: dict[str, dict[str, Any]] = {
    "openai": {"base_url": "https://api.openai.com/v1", "api_key_env": "OPENAI_API_KEY"},
    "deepseek": {"base_url": "https://api.deepseek.com", "api_key_env": "DEEPSEEK_API_KEY", "timeout_s": 600.0},
    # llama.cpp's llama-server, Ollama (port 11434) and vLLM (port 8000) all speak /v1;
    # local servers need no key.
    "local": {"base_url": "http://127.0.0.1:8080/v1"},
}

# Luna, Terra and Sol are three different local models, each with its own
# thinking flag; they are not three effort levels of one model.
BUILTIN_MODELS: dict[str, dict[str, Any]] = {
    "luna": {
        "provider": "local",
        "provider_model": "qwen2.5-coder-7b-instruct",
        "thinking": False,
        "max_output_tokens": 4096,
        "max_iterations": 30,
        "context_chars": 60_000,
        "pricing": FREE,
    },
    "terra": {
        "provider": "local",
        "provider_model": "qwen3-coder-30b-a3b-instruct",
        "thinking": False,
        "max_output_tokens": 8192,
        "max_iterations": 40,
        "context_chars": 120_000,
        "pricing": FREE,
    },
    "sol": {
        "provider": "local",
        "provider_model": "gpt-oss-20b",
        "thinking": True,
        "thinking_label": "Reasoning",
        "reasoning_effort": "high",
        "max_output_tokens": 16384,
        "max_iterations": 50,
        "context_chars": 200_000,
        "pricing": FREE,
    },
    "deepseek-v4-pro": {
        "provider": "deepseek",
        "provider_model": "deepseek-v4-pro",
        "thinking": True,
        "thinking_label": "Thinking (max)",
        "reasoning_effort": "max",
        "max_output_tokens": 32768,
        "max_iterations": 60,
        "context_chars": 400_000,
        "pricing": DEEPSEEK_V4_PRO,
    },
}


class SandboxSpec(BaseModel):
    """How the commands the model runs are confined (``[sandbox]``); see k1412_ls/tools/sandbox/command_sandbox.py."""

    model_config = ConfigDict(extra="forbid")

    # "auto": always in bubblewrap, refused without it. "off" (user configuration only): no sandbox.
    mode: Literal["auto", "off"] = "auto"
    # False: each command gets a network namespace with only its own loopback. True: the machine's network.
    network: bool = Field(default=False, strict=True)
    # True lets commands write the workspace's .git (commit, checkout); read-only otherwise.
    git_writable: bool = Field(default=False, strict=True)
    # More writable directories (package caches such as ~/.cache/pip); user configuration only.
    writable: list[str] = Field(default_factory=list)
    # More paths hidden from commands, on top of the built-in secret directories.
    hidden: list[str] = Field(default_factory=list)
    # More environment variables passed to commands, beside the built-in allow list; user configuration only.
    env: list[Annotated[str, StringConstraints(pattern=r"^[A-Za-z_][A-Za-z0-9_]*$")]] = Field(default_factory=list)
    # More of the home directory shown to commands (read-only), beside the built-in toolchains and caches;
    # "~" shows all of it (secret stores stay hidden). User configuration only.
    readable: list[str] = Field(default_factory=list)
    max_processes: int = Field(default=LIMITS.max_processes, ge=16, le=100_000)


class ApprovalRuleSpec(BaseModel):
    """One ``[[approval.rules]]`` entry: commands starting with ``prefix`` get ``decision``."""

    model_config = ConfigDict(extra="forbid")

    prefix: str = Field(min_length=1, pattern=r"\S")
    decision: Literal["allow", "ask", "forbid"]


class ApprovalSpec(BaseModel):
    """Which commands are asked about (``[approval]``); see k1412_ls/tools/approval/approval_policy.py."""

    model_config = ConfigDict(extra="forbid")

    policy: Literal["on-request", "untrusted", "never"] = "on-request"
    rules: list[ApprovalRuleSpec] = Field(default_factory=list)


class UndoSpec(BaseModel):
    """What runs keep so that they can be undone (``[undo]``); see k1412_ls/tools/undo/preimages.py."""

    model_config = ConfigDict(extra="forbid")

    max_file_mb: float = Field(default=8, gt=0, le=4096)    # a bigger file's change cannot be undone
    max_run_mb: float = Field(default=256, gt=0, le=65536)  # copies one run may keep
    max_total_mb: float = Field(default=1024, gt=0, le=1_048_576)  # the whole store; oldest runs go first
    max_age_days: float = Field(default=14, gt=0, le=3650)


HOOK_EVENTS = ("UserPromptSubmit", "PreToolUse", "PostToolUse", "Stop")


class HookSpec(BaseModel):
    """One ``[[hooks]]`` entry (user configuration only); see k1412_ls/core/hooks.py and docs/conventions.md."""

    model_config = ConfigDict(extra="forbid")

    event: Literal["UserPromptSubmit", "PreToolUse", "PostToolUse", "Stop"]
    # A regular expression matched against the whole tool name (PreToolUse/PostToolUse); "" or "*": every tool.
    matcher: str = ""
    command: str = Field(min_length=1, pattern=r"\S")
    timeout: float = Field(default=60.0, gt=0, le=600)
    # "continue": a hook that crashes, exits neither 0 nor 2, or times out objects to nothing (Claude Code's
    # default); "block": it denies the call or blocks the step, like exit 2.
    on_error: Literal["continue", "block"] = "continue"

    @field_validator("matcher")
    @classmethod
    def _matcher_compiles(cls, value: str) -> str:
        if value not in ("", "*"):
            try:
                re.compile(value)
            except re.error as exc:
                raise ValueError(f"not a regular expression ({exc})") from None
        return value


class ConventionsSpec(BaseModel):
    """Which instruction files and skills a run reads (``[conventions]``); see docs/conventions.md."""

    model_config = ConfigDict(extra="forbid")

    # File names tried in each directory, first found wins (e.g. ["AGENTS.md", "CLAUDE.md", "GEMINI.md"]).
    instruction_files: list[str] = Field(default_factory=lambda: ["AGENTS.md"], max_length=8)
    skills: bool = Field(default=True, strict=True)

    @field_validator("instruction_files")
    @classmethod
    def _plain_names(cls, value: list[str]) -> list[str]:
        for name in value:
            if not name or "/" in name or "\\" in name or name in (".", ".."):
                raise ValueError(f"{name!r} is not a plain file name")
        return value


_MCP_NAME = r"^[A-Za-z0-9_-]{1,32}$"


class McpServerSpec(BaseModel):
    """One ``[mcp.servers.NAME]`` entry (user configuration only); see k1412_ls/tools/mcp and docs/mcp.md."""

    model_config = ConfigDict(extra="forbid")

    command: str | None = Field(default=None, min_length=1)  # a stdio server: the program, run in the sandbox
    args: list[str] = Field(default_factory=list)
    env: dict[str, str] = Field(default_factory=dict)  # set for the server; nothing else of K1412's passes
    env_vars: list[Annotated[str, StringConstraints(pattern=r"^[A-Za-z_][A-Za-z0-9_]*$")]] = \
        Field(default_factory=list)  # passed from K1412's own environment by name
    url: str | None = Field(default=None, pattern=r"^https?://")  # a streamable HTTP server
    enabled: bool = Field(default=True, strict=True)
    tools: list[str] | None = None  # allow list of the server's tool names; None: all of them
    timeout_s: float = Field(default=60.0, gt=0, le=3600)  # one tool call
    startup_timeout_s: float = Field(default=30.0, gt=0, le=600)
    sandbox: bool = Field(default=True, strict=True)  # False: the server runs on the host, said in every result
    network: bool = Field(default=False, strict=True)  # the sandboxed server reaches the network

    @model_validator(mode="after")
    def _one_transport(self) -> McpServerSpec:
        if (self.command is None) == (self.url is None):
            raise ValueError("an MCP server needs exactly one of 'command' (stdio) or 'url' (streamable HTTP)")
        return self


class McpSpec(BaseModel):
    """The MCP servers whose tools runs get (``[mcp]``); a workspace may only disable them."""

    model_config = ConfigDict(extra="forbid")

    servers: dict[Annotated[str, StringConstraints(pattern=_MCP_NAME)], McpServerSpec] = Field(default_factory=dict)
    disabled: list[str] = Field(default_factory=list)  # server names not started
    disabled_tools: list[str] = Field(default_factory=list)  # "server.tool" or "mcp__server__tool" not offered
    # Beyond this many MCP tools (or 15 % of the context budget in schemas) they sit behind the mcp_tools search.
    max_listed_tools: int = Field(default=40, ge=0, le=1000)


class K1412Config(BaseModel):
    """The whole configuration tree; every field has a default."""

    model_config = ConfigDict(extra="forbid")

    default_model: str = "luna"
    providers: dict[str, ProviderSpec] = Field(default_factory=dict)
    models: dict[str, ModelSpec] = Field(default_factory=dict)
    sandbox: SandboxSpec = Field(default_factory=SandboxSpec)
    approval: ApprovalSpec = Field(default_factory=ApprovalSpec)
    budget: BudgetSpec = Field(default_factory=BudgetSpec)
    undo: UndoSpec = Field(default_factory=UndoSpec)
    conventions: ConventionsSpec = Field(default_factory=ConventionsSpec)
    hooks: list[HookSpec] = Field(default_factory=list)
    mcp: McpSpec = Field(default_factory=McpSpec)
    source: str = Field(default="built-in defaults", exclude=True)

    def model_spec(self, model_id: str | None = None) -> ModelSpec:
        """Return the ModelSpec for ``model_id`` (or the default), or raise ConfigError."""
        wanted = model_id or self.default_model
        spec = self.models.get(wanted)
        if spec is None:
            known = ", ".join(sorted(self.models))
            raise ConfigError(f"Unknown model '{wanted}'; known models: {known}.")
        if spec.provider not in self.providers:
            raise ConfigError(
                f"Model '{wanted}' names provider '{spec.provider}', which is not configured ({self.source})."
            )
        return spec

    def models_listing(self) -> list[dict[str, Any]]:
        """Every ModelSpec field, as ``k1412 models --json`` and ``k1412.listModels`` show them."""
        return [{**spec.model_dump(), "id": model_id, "default": model_id == self.default_model}
                for model_id, spec in self.models.items()]

    def provider_for(self, spec: ModelSpec) -> ProviderSpec:
        return self.providers[spec.provider]


def _merge(builtin: dict[str, dict[str, Any]], overrides: dict[str, Any]) -> dict[str, dict[str, Any]]:
    merged = {key: dict(value) for key, value in builtin.items()}
    for key, value in overrides.items():
        if isinstance(value, dict):
            merged[key] = {**merged.get(key, {}), **value}
        else:
            merged[key] = value  # let validation name the bad key
    return merged


def _first_error(exc: ValidationError) -> str:
    err = exc.errors()[0]
    where = ".".join(str(part) for part in err["loc"]) or "(top level)"
    return f"key '{where}': {err['msg']}"


def build_config(data: dict[str, Any], source: str = "built-in defaults") -> K1412Config:
    """Validate raw TOML data merged over the built-in catalogue."""
    raw = dict(data)
    raw["providers"] = _merge(BUILTIN_PROVIDERS, raw.get("providers") or {})
    raw["models"] = _merge(BUILTIN_MODELS, raw.get("models") or {})
    for model_id, override in (data.get("models") or {}).items():
        merged = raw["models"].get(model_id)
        if model_id in BUILTIN_MODELS and isinstance(override, dict) and isinstance(merged, dict) \
                and "pricing" not in override and _serves_another_model(BUILTIN_MODELS[model_id], override):
            # A built-in id pointed at another model or provider keeps no built-in price: unpriced, not guessed.
            merged.pop("pricing", None)
    for model_id, model in raw["models"].items():
        if isinstance(model, dict):
            model["id"] = model_id
    try:
        config = K1412Config.model_validate(raw)
    except ValidationError as exc:
        raise ConfigError(f"Invalid configuration in {source}: {_first_error(exc)}.") from None
    config.source = source
    for model_id, spec in config.models.items():
        if spec.provider not in config.providers:
            raise ConfigError(
                f"Invalid configuration in {source}: key 'models.{model_id}.provider' names unknown provider "
                f"'{spec.provider}'."
            )
    return config


def _serves_another_model(builtin: dict[str, Any], override: dict[str, Any]) -> bool:
    return any(key in override and override[key] != builtin.get(key) for key in ("provider", "provider_model"))


def read_toml(path: Path) -> dict[str, Any]:
    """Parse one TOML file; ConfigError with one sentence naming the file otherwise."""
    try:
        return tomllib.loads(path.read_text(encoding="utf-8"))
    except tomllib.TOMLDecodeError as exc:
        raise ConfigError(f"Invalid TOML in {path}: {exc}.") from None
    except (OSError, UnicodeDecodeError) as exc:
        raise ConfigError(f"Cannot read configuration file {path}: {exc}.") from None


def load_config(explicit: str | None = None, workspace: Path | None = None) -> K1412Config:
    """Load the configuration, raising ConfigError with one sentence on any problem."""
    path = find_config_file(explicit, workspace)
    if path is None:
        return build_config({})
    data = read_toml(path)
    if workspace is not None and not explicit and path == workspace / ".k1412" / "config.toml" \
            and not os.environ.get("K1412_CONFIG"):
        data = _over_user_confinement(data, path)
    return build_config(data, source=str(path))


def user_config_path() -> Path:
    """The user's own (trusted) configuration file, ``$XDG_CONFIG_HOME/k1412/config.toml``."""
    xdg = os.environ.get("XDG_CONFIG_HOME") or str(Path.home() / ".config")
    return Path(xdg) / "k1412" / "config.toml"


def _over_user_confinement(data: dict[str, Any], path: Path) -> dict[str, Any]:
    """A workspace file laid over the user's own: for every non-free key the user's value stays in force.

    The workspace file replaces the user's file for models, providers and
    ``default_model``; everything else (sandbox, approval, budget, undo) keeps the
    user's value underneath, and the workspace can only make it stricter.
    """
    user_path = user_config_path()
    user = read_toml(user_path) if user_path.is_file() else {}
    defaults = K1412Config().model_dump(exclude={"providers", "models"})
    return apply_workspace_rules(data, user, defaults, path)


def api_key_for(provider: ProviderSpec, provider_name: str) -> str | None:
    """Read the provider's key from its environment variable; None when it sends no key."""
    if not provider.api_key_env:
        return None
    key = os.environ.get(provider.api_key_env)
    if not key:
        raise ConfigError(
            f"Provider '{provider_name}' needs an API key: set the environment variable {provider.api_key_env}."
        )
    return key



__all__ = [
    "ApprovalRuleSpec",
    "ApprovalSpec",
    "BudgetSpec",
    "ConfigError",
    "ConventionsSpec",
    "HookSpec",
    "K1412Config",
    "McpServerSpec",
    "McpSpec",
    "ModelSpec",
    "Pricing",
    "ProviderSpec",
    "Rates",
    "SandboxSpec",
    "api_key_for",
    "build_config",
    "find_config_file",
    "load_config",
    "state_dir",
    "user_config_path",
]
