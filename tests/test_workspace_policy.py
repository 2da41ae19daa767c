"""Every configuration key has one workspace rule, and every rule holds against a workspace file.

The walk covers the whole pydantic tree, so a key added later without a rule in
k1412_ls/workspace_policy.py fails here. For each restricting key, a widening
workspace value is refused (or clamped) and a restricting one is taken.
"""

from __future__ import annotations

import json
import re
import types
import typing
from pathlib import Path
from typing import Any

import pytest
from pydantic import BaseModel

from k1412_ls.config import K1412Config, load_config
from k1412_ls.locations import ConfigError
from k1412_ls.lsp.settings import _FIELDS, CLIENT_SIDE_KEYS, EDITOR_SETTINGS_SCOPE
from k1412_ls.workspace_policy import WORKSPACE_RULES, rule_for

ROOT = Path(__file__).resolve().parents[1]
DOCS = ROOT / "docs" / "configuration.md"


def _models_in(annotation: Any) -> list[tuple[str, type[BaseModel]]]:
    """(suffix, model) for the pydantic models an annotation holds: '' itself, '<name>' dict values, '[]' items."""
    origin = typing.get_origin(annotation)
    if isinstance(annotation, type) and issubclass(annotation, BaseModel):
        return [("", annotation)]
    if origin in (typing.Union, types.UnionType):
        return [found for arg in typing.get_args(annotation) for found in _models_in(arg)]
    if origin is dict:
        return [(".<name>" + suffix, model) for suffix, model in _models_in(typing.get_args(annotation)[1])]
    if origin is list:
        return [("[]" + suffix, model) for suffix, model in _models_in(typing.get_args(annotation)[0])]
    return []


def every_key(model: type[BaseModel], prefix: str = "") -> list[str]:
    keys: list[str] = []
    for name, info in model.model_fields.items():
        if info.exclude:
            continue  # not a configuration key (where the configuration came from)
        key = f"{prefix}.{name}" if prefix else name
        keys.append(key)
        for suffix, inner in _models_in(info.annotation):
            keys.extend(every_key(inner, key + suffix))
    return keys


ALL_KEYS = every_key(K1412Config)


def test_the_walk_sees_the_whole_tree() -> None:
    for key in ("undo.max_file_mb", "models.<name>.pricing.off_peak.output", "approval.rules[].decision",
                "providers.<name>.api_key_env", "sandbox.max_processes", "budget.max_cost"):
        assert key in ALL_KEYS


@pytest.mark.parametrize("key", ALL_KEYS)
def test_every_key_has_a_workspace_rule(key: str) -> None:
    table = key.rsplit(".", 1)[0] if "." in key else ""
    has_own = key in WORKSPACE_RULES
    is_section = any(known.startswith(key + ".") or known.startswith(key + "[]") for known in WORKSPACE_RULES)
    assert has_own or is_section or (rule_for(table) is not None and rule_for(table).kind == "never"), (
        f"'{key}' has no rule in k1412_ls/workspace_policy.py: decide whether a workspace may set it")


def docs_classes() -> dict[str, str]:
    """key -> class, from the rows of the workspace table in docs/configuration.md."""
    text = DOCS.read_text(encoding="utf-8")
    section = text.split("## What a workspace may set", 1)[1].split("\n## ", 1)[0]
    rows = [line.split("|") for line in section.splitlines() if line.startswith("| `")]
    return {row[1].split("`")[1]: row[2].strip() for row in rows}


DOC_CLASS = {"free": "freely", "never": "never"}


def test_every_rule_names_a_real_key_and_its_class_is_in_the_docs_table() -> None:
    documented = docs_classes()
    for key, rule in WORKSPACE_RULES.items():
        assert key in ALL_KEYS, f"rule for '{key}', which is not a configuration key"
        assert documented.get(key) == DOC_CLASS.get(rule.kind, "only to restrict"), (
            f"'{key}' is missing from the workspace table in docs/configuration.md or has another class there")


# key -> (a widening workspace value, a restricting one, the user's value or None).
WIDEN_AND_RESTRICT: dict[str, tuple[Any, Any, Any]] = {
    "providers.<name>.base_url": ('"https://evil.example/v1"', '"http://127.0.0.1:9/v1"', None),
    "providers.<name>.api_key_env": ('"OPENAI_API_KEY"', None, None),
    "models.<name>.pricing": ('{ input = 0, output = 0 }', None, None),
    "sandbox.mode": ('"off"', None, None),
    "sandbox.network": ("true", "false", "true"),
    "sandbox.git_writable": ("true", "false", "true"),
    "sandbox.writable": ('["/"]', None, None),
    "sandbox.env": ('["MYSQL_PWD"]', None, None),
    "sandbox.readable": ('["~"]', None, None),
    "sandbox.hidden": (None, '["secrets"]', '["mine"]'),
    "sandbox.max_processes": ("100000", "64", "2048"),
    "approval.policy": ('"on-request"', '"untrusted"', '"never"'),
    "approval.rules": (None, '[{ prefix = "git push", decision = "forbid" }]',
                       '[{ prefix = "make", decision = "ask" }]'),
    "approval.rules[].decision": ('[{ prefix = "rm", decision = "allow" }]',
                                  '[{ prefix = "rm", decision = "ask" }]', None),
    "budget.max_cost": ("50", "0.5", "1"),
    "budget.max_tokens": ("10000000", "1000", "50000"),
    "undo.max_file_mb": ("4096", "1", None),
    "undo.max_run_mb": ("65536", "10", "100"),
    "undo.max_total_mb": ("1048576", "100", None),
    "undo.max_age_days": ("3650", "1", "7"),
    "providers.<name>.managed": ("true", None, None),
    "providers.<name>.gguf": ('"/var/tmp/planted.gguf"', None, None),
    "providers.<name>.chat_template": ('"chatml"', None, None),
    "hooks": ('"Stop"', None, None),
    "mcp.servers": ('{ planted = { command = "sh", args = ["-c", "true"] } }', None, None),
    "mcp.disabled": (None, '["theirs"]', '["mine"]'),
    "mcp.disabled_tools": (None, '["theirs.tool"]', '["mine.tool"]'),
    "mcp.max_listed_tools": ("1000", "5", "100"),
}


def test_every_restricting_rule_has_a_widen_and_restrict_case() -> None:
    restricting = {key for key, rule in WORKSPACE_RULES.items() if rule.kind != "free"}
    assert restricting == set(WIDEN_AND_RESTRICT)


def _toml(key: str, value: str) -> str:
    if key == "hooks":
        return f'[[hooks]]\nevent = {value}\ncommand = "true"\n'
    if key == "providers.<name>.managed":
        return f'[providers.local]\nmanaged = {value}\ngguf = "/var/tmp/planted.gguf"\n'
    if key == "approval.rules[].decision":
        return f"[approval]\nrules = {value}\n"
    if key.startswith("providers.<name>."):
        return f'[providers.local]\n{key.rsplit(".", 1)[1]} = {value}\n'
    if key.startswith("models.<name>."):
        return f'[models.luna]\n{key.rsplit(".", 1)[1]} = {value}\n'
    section, name = key.split(".")
    return f"[{section}]\n{name} = {value}\n"


def _value(config: K1412Config, key: str) -> Any:
    node: Any = config
    for part in key.split("."):
        node = getattr(node, part)
    return node


@pytest.fixture
def home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "xdg"))
    monkeypatch.delenv("K1412_CONFIG", raising=False)
    (tmp_path / "ws" / ".k1412").mkdir(parents=True)
    return tmp_path


def _write(home: Path, workspace: str, user: str | None) -> Path:
    (home / "ws" / ".k1412" / "config.toml").write_text(workspace)
    if user is not None:
        (home / "xdg" / "k1412").mkdir(parents=True, exist_ok=True)
        (home / "xdg" / "k1412" / "config.toml").write_text(user)
    return home / "ws"


@pytest.mark.parametrize("key", sorted(k for k, v in WIDEN_AND_RESTRICT.items() if v[0] is not None))
def test_a_widening_workspace_value_is_refused_or_clamped(key: str, home: Path,
                                                         caplog: pytest.LogCaptureFixture) -> None:
    widen, _, user = WIDEN_AND_RESTRICT[key]
    ws = _write(home, _toml(key, widen), _toml(key, user) if user is not None else None)
    # Positive control: the same file named by the user is trusted and takes effect.
    trusted = load_config(str(ws / ".k1412" / "config.toml"), ws)
    rule = WORKSPACE_RULES[key]
    if rule.kind == "lower":
        assert _value(trusted, key) == float(widen)
        # The note is caught where it is made: other tests of the session may reconfigure logging.
        import k1412_ls.workspace_policy as policy

        notes: list[str] = []
        real = policy._LOG.warning
        policy._LOG.warning = lambda msg, *a, **k: notes.append(msg % a)  # type: ignore[method-assign]
        try:
            config = load_config(None, ws)
        finally:
            policy._LOG.warning = real  # type: ignore[method-assign]
        in_force = float(user) if user is not None else _value(K1412Config(), key)
        assert _value(config, key) == in_force, f"a workspace raised '{key}'"
        assert any("may only lower it" in note for note in notes)
        return
    with pytest.raises(ConfigError) as info:
        load_config(None, ws)
    message = str(info.value)
    assert "workspace file, which is not trusted" in message and "\n" not in message
    assert "$XDG_CONFIG_HOME/k1412/config.toml" in message


@pytest.mark.parametrize("key", sorted(k for k, v in WIDEN_AND_RESTRICT.items() if v[1] is not None))
def test_a_restricting_workspace_value_is_taken(key: str, home: Path) -> None:
    _, restrict, user = WIDEN_AND_RESTRICT[key]
    ws = _write(home, _toml(key, restrict), _toml(key, user) if user is not None else None)
    config = load_config(None, ws)
    if key == "providers.<name>.base_url":
        assert config.providers["local"].base_url == "http://127.0.0.1:9/v1"
    elif key == "approval.rules[].decision":
        assert [rule.decision for rule in config.approval.rules] == ["ask"]
    elif key == "sandbox.hidden":
        assert config.sandbox.hidden == ["mine", "secrets"]  # the user's stay, the workspace's are added
    elif key == "approval.rules":
        assert [rule.prefix for rule in config.approval.rules] == ["make", "git push"]
    elif key in ("mcp.disabled", "mcp.disabled_tools"):
        assert _value(config, key) == [*json.loads(user), *json.loads(restrict)]  # joined to the user's
    elif WORKSPACE_RULES[key].kind == "lower":
        assert _value(config, key) == float(restrict)
    elif WORKSPACE_RULES[key].kind == "false_only":
        assert _value(config, key) is False  # the user's true is overridden by the workspace's false
    else:
        assert _value(config, key) == restrict.strip('"')


def test_the_reported_undo_hole_is_closed(home: Path) -> None:
    ws = _write(home, "[undo]\nmax_file_mb = 4096\nmax_run_mb = 65536\n", None)
    config = load_config(None, ws)
    assert (config.undo.max_file_mb, config.undo.max_run_mb) == (8, 256)


# -- editor settings -------------------------------------------------------------------------------

def editor_settings() -> set[str]:
    """Every editor setting: the server's, VS Code's contributed ones, and the Neovim plugin's options."""
    manifest = json.loads((ROOT / "editors" / "vscode" / "package.json").read_text(encoding="utf-8"))
    vscode = {key.removeprefix("k1412.") for key in manifest["contributes"]["configuration"]["properties"]}
    nvim_dir = ROOT / "editors" / "nvim" / "lua" / "k1412"
    constants = dict(re.findall(r"^M\.(SETTING_\w+) = '(\w+)'", (nvim_dir / "constants.lua").read_text(), re.M))
    options = (nvim_dir / "config.lua").read_text(encoding="utf-8")
    nvim = {constants[name] for name in re.findall(r"C\.(SETTING_\w+)", options)}
    nvim |= set(re.findall(r"(?<![\w.])g\.(\w+)", options))
    return set(_FIELDS) | vscode | nvim


def test_the_editor_walk_sees_every_editor() -> None:
    found = editor_settings()
    assert {"server.command", "configPath", "cmd", "confirmEdits", "trace.server"} <= found
    assert all(key.split(".")[0] in CLIENT_SIDE_KEYS for key in found - set(_FIELDS) - {"cmd"})


@pytest.mark.parametrize("key", sorted(editor_settings()))
def test_every_editor_setting_has_a_workspace_class_in_code_and_docs(key: str) -> None:
    scope = EDITOR_SETTINGS_SCOPE.get(key)
    assert scope is not None, f"editor setting '{key}' has no class in EDITOR_SETTINGS_SCOPE"
    shown = key if key == "cmd" else f"k1412.{key}"
    expected = {"never": "never", "restrict": "only to restrict", "free": "freely"}[scope]
    assert docs_classes().get(shown) == expected, f"'{shown}' is missing from the docs table or has another class"


def test_vscode_settings_naming_a_program_or_a_path_are_machine_scoped_and_restricted() -> None:
    manifest = json.loads((ROOT / "editors" / "vscode" / "package.json").read_text(encoding="utf-8"))
    properties = manifest["contributes"]["configuration"]["properties"]
    restricted = manifest["capabilities"]["untrustedWorkspaces"]["restrictedConfigurations"]
    never = {f"k1412.{key}" for key, scope in EDITOR_SETTINGS_SCOPE.items() if scope == "never" and key != "cmd"}
    assert {"k1412.server.command", "k1412.configPath"} <= never
    for key in never:
        assert properties[key].get("scope") == "machine" and key in restricted, key
