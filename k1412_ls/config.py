"""Configuration: one fully defaulted pydantic tree, loaded once from TOML.

Search order: ``--config FILE``, ``$K1412_CONFIG``,
``<workspace>/.k1412/config.toml``, ``$XDG_CONFIG_HOME/k1412/config.toml``;
built-in defaults otherwise. A file can add or override providers and models.
"""

from __future__ import annotations

import os
import tomllib
from pathlib import Path
from typing import Annotated, Any, Literal

from pydantic import BaseModel, ConfigDict, Field, StringConstraints, ValidationError

from k1412_ls.limits import LIMITS
from k1412_ls.locations import ConfigError, find_config_file, state_dir
from k1412_ls.pricing import DEEPSEEK_V4_PRO, FREE, Pricing, Rates


class ProviderSpec(BaseModel):
    """An OpenAI-compatible endpoint."""

    model_config = ConfigDict(extra="forbid")

    base_url: str
    api_key_env: str | None = None
    timeout_s: float = Field(default=120.0, gt=0)
    max_retries: int = Field(default=2, ge=0, le=10)


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
        check_workspace_config(data, path)
        data = _over_user_confinement(data)
    return build_config(data, source=str(path))


def _over_user_confinement(data: dict[str, Any]) -> dict[str, Any]:
    """A workspace file's [sandbox]/[approval] laid over the user's own: it can only add restrictions.

    The workspace file replaces the user's file for models and providers, but
    the user's confinement choices (network, writable caches, approval rules)
    stay, and the workspace file cannot undo any of them by merely existing.
    """
    user_path = user_config_path()
    user = read_toml(user_path) if user_path.is_file() else {}
    user_sandbox = user.get("sandbox") if isinstance(user.get("sandbox"), dict) else {}
    user_approval = user.get("approval") if isinstance(user.get("approval"), dict) else {}
    ws_sandbox = data.get("sandbox", {})
    ws_approval = data.get("approval", {})
    if not isinstance(ws_sandbox, dict) or not isinstance(ws_approval, dict):
        return data  # build_config reports the type error
    budget = _stricter_budget(user.get("budget"), data.get("budget"))
    if budget is not None:
        data = {**data, "budget": budget}
    sandbox = {**user_sandbox, **{k: v for k, v in ws_sandbox.items() if k != "hidden"}}
    # A workspace file may lower the process cap, never raise it above the user's (or the default).
    ws_cap, user_cap = ws_sandbox.get("max_processes"), user_sandbox.get("max_processes", LIMITS.max_processes)
    if isinstance(ws_cap, int) and isinstance(user_cap, int) and not isinstance(ws_cap, bool):
        sandbox["max_processes"] = min(ws_cap, user_cap)
    sandbox["hidden"] = _joined(user_sandbox.get("hidden", []), ws_sandbox.get("hidden", []))
    approval = {**user_approval, **{k: v for k, v in ws_approval.items() if k != "rules"}}
    approval["rules"] = _joined(user_approval.get("rules", []), ws_approval.get("rules", []))
    return {**data, "sandbox": sandbox, "approval": approval}


def _stricter_budget(user: Any, workspace: Any) -> Any:
    """The user's [budget] with a workspace file's limits applied only where they are lower."""
    if not isinstance(user, dict) or not isinstance(workspace, dict):
        return workspace if isinstance(workspace, dict) or not isinstance(user, dict) else user
    merged = dict(user)
    for key, value in workspace.items():
        mine = merged.get(key)
        both_numbers = isinstance(value, int | float) and isinstance(mine, int | float)
        merged[key] = min(value, mine) if both_numbers else (value if mine is None else mine)
    return merged


def _joined(first: Any, second: Any) -> Any:
    """Two TOML lists joined; a value that is not a list is passed on for validation to name."""
    if not isinstance(first, list):
        return first
    if not isinstance(second, list):
        return second
    return [*first, *second]


def user_config_path() -> Path:
    """The user's own (trusted) configuration file, ``$XDG_CONFIG_HOME/k1412/config.toml``."""
    xdg = os.environ.get("XDG_CONFIG_HOME") or str(Path.home() / ".config")
    return Path(xdg) / "k1412" / "config.toml"


_LOOPBACK_HOSTS = frozenset({"127.0.0.1", "localhost", "::1", "[::1]"})


_WORKSPACE_SANDBOX_FORBIDDEN = {
    "mode": "turn the sandbox off", "writable": "make more directories writable",
    "env": "pass more environment variables to commands", "readable": "show more of your home directory to commands",
}


def _check_workspace_restrictions(data: dict[str, Any], path: Path) -> None:
    """A workspace file may make commands more confined, never less."""
    where = f"{path} (a workspace file, which may only restrict commands)"
    fix = "set it in $XDG_CONFIG_HOME/k1412/config.toml or pass --config"
    sandbox = data.get("sandbox")
    if isinstance(sandbox, dict):
        for key, what in _WORKSPACE_SANDBOX_FORBIDDEN.items():
            if key in sandbox:
                raise ConfigError(f"{where} may not set 'sandbox.{key}' (it would {what}); {fix}.")
        for key in ("network", "git_writable"):
            if sandbox.get(key, False) is not False:
                value = sandbox[key]
                shown = "true" if value is True else repr(value)
                raise ConfigError(f"{where} may not set 'sandbox.{key} = {shown}'; only 'false' is allowed there, "
                                  f"so {fix}.")
    approval = data.get("approval")
    if isinstance(approval, dict):
        if approval.get("policy", "untrusted") not in ("untrusted", "never"):
            raise ConfigError(f"{where} may not set 'approval.policy = {approval['policy']!r}'; only 'untrusted' "
                              f"or 'never' are allowed there, so {fix}.")
        for rule in approval.get("rules") or []:
            if isinstance(rule, dict) and rule.get("decision") == "allow":
                raise ConfigError(f"{where} may not add an 'allow' approval rule ({rule.get('prefix')!r}); only "
                                  f"'ask' and 'forbid' are allowed there, so {fix}.")


def check_workspace_config(data: dict[str, Any], path: Path) -> None:
    """A repository's own config is untrusted: it may pick models, never where keys or prompts go.

    A cloned repository could otherwise point a keyed provider at its author's
    server and receive the user's API key (and the user's memories in every
    prompt). So a workspace file may not change built-in providers' endpoints or
    keys, and may only add keyless providers on this machine's loopback. It may
    cut commands off the network (``[sandbox] network = false``) but never allow it.
    """
    from urllib.parse import urlsplit

    _check_workspace_restrictions(data, path)
    for model_id, model in (data.get("models") or {}).items() if isinstance(data.get("models"), dict) else ():
        if isinstance(model, dict) and "pricing" in model:
            # Prices drive budgets: a cloned repository must not make a paid model look free.
            raise ConfigError(
                f"{path} (a workspace file, which is not trusted with prices) may not set "
                f"'models.{model_id}.pricing'; put prices in $XDG_CONFIG_HOME/k1412/config.toml or pass --config."
            )
    providers = data.get("providers") or {}
    if not isinstance(providers, dict):
        return  # build_config reports the type error
    for name, spec in providers.items():
        if not isinstance(spec, dict):
            continue
        where = f"{path} (a workspace file, which is not trusted with endpoints or keys)"
        if "api_key_env" in spec:
            raise ConfigError(
                f"{where} may not set 'providers.{name}.api_key_env'; put provider keys in "
                f"$XDG_CONFIG_HOME/k1412/config.toml or pass --config."
            )
        if "base_url" in spec:
            host = urlsplit(str(spec["base_url"])).hostname or ""
            if (name in BUILTIN_PROVIDERS and name != "local") or host not in _LOOPBACK_HOSTS:
                raise ConfigError(
                    f"{where} may not point 'providers.{name}.base_url' at {spec['base_url']}; only keyless "
                    f"providers on 127.0.0.1 are allowed there, so configure this in "
                    f"$XDG_CONFIG_HOME/k1412/config.toml or pass --config."
                )


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
    "K1412Config",
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
