"""What a repository's own ``.k1412/config.toml`` may set: one declaration per configuration key.

A workspace file is untrusted. Every key of the configuration tree has exactly
one rule here, and ``apply_workspace_rules`` enforces all of them the same way:

- ``free``: harmless (which model, display labels); the workspace value is taken;
- ``never``: only the user's own file (or ``--config``, ``$K1412_CONFIG``) may set it;
  a workspace value is refused in one sentence;
- ``lower``: a number the workspace may only lower; a higher value is clamped to the one
  in force (the user's, else the built-in default) and a note is logged;
- ``false_only``: a switch whose ``true`` widens; only ``false`` is accepted;
- ``one_of``: only the stricter values in ``allowed`` are accepted;
- ``add_only``: a list the workspace may only add to (joined after the user's);
- ``loopback``: an endpoint only on this machine's loopback, never for a built-in keyed provider.

Keys with ``<name>`` stand for any table name (``providers.<name>``), ``[]`` for every item of a
list. A rule on a table covers everything below it. ``tests/test_workspace_policy.py`` walks the
pydantic tree and fails for a key without a rule here.
"""

from __future__ import annotations

import copy
import logging
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal
from urllib.parse import urlsplit

from k1412_ls.locations import ConfigError

Kind = Literal["free", "never", "lower", "false_only", "one_of", "add_only", "loopback"]
_LOG = logging.getLogger("k1412.config")
_MISSING: Any = object()
_LOOPBACK_HOSTS = frozenset({"127.0.0.1", "localhost", "::1", "[::1]"})
_KEYED_BUILTINS = frozenset({"openai", "deepseek"})
_FIX = "set it in $XDG_CONFIG_HOME/k1412/config.toml or pass --config"


@dataclass(frozen=True)
class Rule:
    kind: Kind
    why: str  # what "restrict" means for the key, or what setting it would do
    allowed: tuple[Any, ...] = field(default=())


def _free(why: str) -> Rule:
    return Rule("free", why)


def _never(why: str) -> Rule:
    return Rule("never", why)


_LOWER = Rule("lower", "a lower number")

WORKSPACE_RULES: dict[str, Rule] = {
    "default_model": _free("which model runs; its endpoint and price stay the user's"),
    "providers.<name>.base_url": Rule("loopback", "only a keyless provider on 127.0.0.1, localhost or ::1"),
    "providers.<name>.api_key_env": _never("it would send one of the user's keys to the repository's endpoint"),
    "providers.<name>.timeout_s": _free("how long to wait for a reply"),
    "providers.<name>.max_retries": _free("retries of a failed request, at most 10"),
    "providers.<name>.managed": _never("K1412 would start a model server of the repository's choosing"),
    "providers.<name>.gguf": _never("K1412 would start a model server on a file of the repository's choosing"),
    "providers.<name>.chat_template": _never("it is read by the model server K1412 starts outside the sandbox"),
    "providers.<name>.idle_s": _free("how long a managed server stays up unused"),
    "models.<name>.id": _free("replaced by the table's name"),
    "models.<name>.provider": _free("a configured provider; endpoints stay restricted"),
    "models.<name>.provider_model": _free("the model name the provider knows"),
    "models.<name>.thinking": _free("whether reasoning_effort is sent"),
    "models.<name>.thinking_label": _free("a display label"),
    "models.<name>.reasoning_effort": _free("sent to the provider as given"),
    "models.<name>.max_output_tokens": _free("bounded by its range; spend is capped by budget"),
    "models.<name>.max_iterations": _free("bounded by its range; spend is capped by budget"),
    "models.<name>.context_chars": _free("bounded by its range; spend is capped by budget"),
    "models.<name>.pricing": _never("prices drive budgets: a paid model must not look free"),
    "sandbox.mode": _never("it would turn the sandbox off"),
    "sandbox.network": Rule("false_only", "'false' cuts commands off the network"),
    "sandbox.git_writable": Rule("false_only", "'false' keeps .git read-only"),
    "sandbox.writable": _never("it would make more directories writable"),
    "sandbox.env": _never("it would pass more environment variables to commands"),
    "sandbox.readable": _never("it would show more of your home directory to commands"),
    "sandbox.hidden": Rule("add_only", "more hidden paths, joined to the user's"),
    "sandbox.max_processes": _LOWER,
    "approval.policy": Rule("one_of", "a policy that asks or refuses more", ("untrusted", "never")),
    "approval.rules": Rule("add_only", "more rules, joined to the user's"),
    "approval.rules[].prefix": _free("the words a rule matches"),
    "approval.rules[].decision": Rule("one_of", "a rule that asks or forbids", ("ask", "forbid")),
    "budget.max_cost": _LOWER,
    "budget.max_tokens": _LOWER,
    "undo.max_file_mb": _LOWER,
    "undo.max_run_mb": _LOWER,
    "undo.max_total_mb": _LOWER,
    "undo.max_age_days": _LOWER,
    "hooks": _never("a hook runs a command outside the sandbox"),
    "mcp.servers": _never("an MCP server runs a program (or reaches an endpoint) of the repository's choosing"),
    "mcp.disabled": Rule("add_only", "more servers left off, joined to the user's"),
    "mcp.disabled_tools": Rule("add_only", "more MCP tools left off, joined to the user's"),
    "mcp.max_listed_tools": _LOWER,
    "conventions.instruction_files": _free("which guidance files are read: text for the model, never a permission"),
    "conventions.skills": _free("whether skills are listed: text for the model, never a permission"),
}


def rule_for(key: str) -> Rule | None:
    """The rule of a normalised key, or of the nearest table above it that has one."""
    parts = key.split(".")
    for end in range(len(parts), 0, -1):
        prefix = ".".join(parts[:end])
        rule = WORKSPACE_RULES.get(prefix) or WORKSPACE_RULES.get(prefix.removesuffix("[]"))
        if rule is not None:
            return rule
    return None


def _normalised(parent: str, name: str) -> str:
    if parent in ("providers", "models"):
        return f"{parent}.<name>"
    return f"{parent}.{name}" if parent else name


def _has_rules_below(key: str) -> bool:
    return any(known.startswith(key + ".") or known.startswith(key + "[]") for known in WORKSPACE_RULES)


def _where(path: Path) -> str:
    return f"{path} (a workspace file, which is not trusted to widen what K1412 may do: it may only restrict)"


def _check_value(key: str, shown: str, value: Any, rule: Rule, path: Path, context: dict[str, Any]) -> None:
    where = _where(path)
    if rule.kind == "never":
        raise ConfigError(f"{where} may not set '{shown}' ({rule.why}); {_FIX}.")
    if rule.kind == "false_only" and value is not False:
        written = "true" if value is True else repr(value)
        raise ConfigError(f"{where} may not set '{shown} = {written}'; only 'false' is allowed there, so {_FIX}.")
    if rule.kind == "one_of" and value not in rule.allowed:
        allowed = " or ".join(repr(item) for item in rule.allowed)
        raise ConfigError(f"{where} may not set '{shown} = {value!r}'; only {allowed} are allowed there, so {_FIX}.")
    if rule.kind == "loopback":
        provider = context.get("name", "")
        host = urlsplit(str(value)).hostname or ""
        if provider in _KEYED_BUILTINS or host not in _LOOPBACK_HOSTS:
            raise ConfigError(f"{where} may not point '{shown}' at {value}; only keyless providers on 127.0.0.1 "
                              f"are allowed there, so {_FIX}.")


def check_workspace_data(data: Any, path: Path, parent: str = "", shown_parent: str = "",
                         context: dict[str, Any] | None = None) -> None:
    """Refuse, in one sentence, the first workspace value its rule does not allow."""
    if not isinstance(data, dict):
        return  # build_config reports the type error
    for name, value in data.items():
        key = _normalised(parent, str(name))
        shown = f"{shown_parent}.{name}" if shown_parent else str(name)
        here = {"name": str(name)} if parent in ("providers", "models") else dict(context or {})
        rule = WORKSPACE_RULES.get(key)
        if rule is not None:
            _check_value(key, shown, value, rule, path, here)
        if isinstance(value, list) and _has_rules_below(key):
            for index, item in enumerate(value):
                check_workspace_data(item, path, key + "[]", f"{shown}[{index}]", here)
        elif isinstance(value, dict) and (rule is None or rule.kind != "never") and _has_rules_below(key):
            check_workspace_data(value, path, key, shown, here)


def _get(data: dict[str, Any], key: str) -> Any:
    node: Any = data
    for part in key.split("."):
        if not isinstance(node, dict) or part not in node:
            return _MISSING
        node = node[part]
    return node


def _put(data: dict[str, Any], key: str, value: Any) -> None:
    *tables, last = key.split(".")
    node = data
    for part in tables:
        child = node.get(part)
        if not isinstance(child, dict):
            if child is not None:
                return  # a section of the wrong type: build_config names it
            child = node[part] = {}
        node = child
    node[last] = value


def _number(value: Any) -> bool:
    return isinstance(value, int | float) and not isinstance(value, bool)


def _layered(key: str, rule: Rule, user: Any, mine: Any, default: Any, path: Path) -> Any:
    """The value in force for a fixed key: the user's stays underneath the workspace's restriction."""
    if mine is _MISSING:
        return user
    if rule.kind == "add_only":
        if isinstance(user, list) and isinstance(mine, list):
            return [*user, *mine]
        return mine
    if rule.kind == "lower":
        limit = user if user is not _MISSING else default
        if _number(mine) and _number(limit) and mine > limit:
            _LOG.warning("%s sets '%s = %s', above the %s in force; %s holds (a workspace may only lower it).",
                         path, key, mine, limit, limit)
            return limit
    return mine


def apply_workspace_rules(data: dict[str, Any], user: dict[str, Any], defaults: dict[str, Any],
                          path: Path) -> dict[str, Any]:
    """Check a workspace file's data and lay it over the user's restrictions.

    The workspace file replaces the user's file for the free keys (models, providers,
    ``default_model``); for every other fixed key the user's value stays in force and
    the workspace can only make it stricter.
    """
    check_workspace_data(data, path)
    merged = copy.deepcopy(data)
    for key, rule in WORKSPACE_RULES.items():
        if rule.kind == "free" or "<name>" in key or "[]" in key:
            continue
        value = _layered(key, rule, _get(user, key), _get(data, key), _get(defaults, key), path)
        if value is not _MISSING:
            _put(merged, key, value)
    return merged
