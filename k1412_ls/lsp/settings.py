"""Editor settings (section ``k1412``): parsed once into a fully defaulted object.

Settings arrive in ``initializationOptions`` and ``workspace/didChangeConfiguration``.
A bad value is reported as one sentence and the previous value is kept, so a
typo in one key never resets the others. Plain dataclasses keep server start-up
free of heavier imports.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, replace
from typing import Any, Literal

from k1412_ls.lsp import constants as c


@dataclass(frozen=True)
class Settings:
    """Every editor setting, each with a default."""

    model: str | None = None
    config_path: str | None = None
    user: str | None = None
    confirm_edits: bool = False
    warm_up_at_start: bool = False


# setting key -> (dataclass field, accepted type, how to describe it)
_FIELDS: dict[str, tuple[str, type, str]] = {
    c.SETTING_MODEL: ("model", str, "a model id string"),
    c.SETTING_CONFIG_PATH: ("config_path", str, "a file path string"),
    c.SETTING_USER: ("user", str, "a user name string"),
    c.SETTING_CONFIRM_EDITS: ("confirm_edits", bool, "true or false"),
    c.SETTING_WARM_UP_AT_START: ("warm_up_at_start", bool, "true or false"),
}


# May a workspace (``.vscode/settings.json``, a project's files) set each editor setting?
# "never": only the user's own settings (they name a program, a configuration file or whose
# approvals apply); "restrict": only the stricter value; "free": harmless. The editor clients
# enforce it (VS Code: machine scope and editors/vscode/src/trust.ts; Neovim reads only the user's
# config); docs/configuration.md has the table and tests/test_workspace_policy.py checks every key.
EDITOR_SETTINGS_SCOPE: dict[str, Literal["never", "restrict", "free"]] = {
    c.SETTING_MODEL: "free",
    c.SETTING_CONFIG_PATH: "never",
    c.SETTING_USER: "never",
    c.SETTING_CONFIRM_EDITS: "restrict",
    c.SETTING_WARM_UP_AT_START: "free",
    "server.command": "never",
    "trace.server": "free",
    "cmd": "never",  # Neovim's name for the server command
}


# Keys of the `k1412` section that configure the editor integration, not the server.
CLIENT_SIDE_KEYS = frozenset({"server", "trace"})


def section_of(raw: Any) -> Any:
    """The ``k1412`` section of a settings payload (or the payload itself when it is the section)."""
    if isinstance(raw, Mapping) and isinstance(raw.get(c.SETTINGS_SECTION), Mapping):
        return raw[c.SETTINGS_SECTION]
    return raw


def parse_settings(raw: Any, previous: Settings | None = None) -> tuple[Settings, list[str]]:
    """Merge ``raw`` over ``previous`` (or defaults); return the settings and one sentence per problem.

    Keys that are absent keep their previous value; ``null`` or an empty string
    resets a key to its default.
    """
    settings = previous or Settings()
    if raw is None:
        return settings, []
    section = section_of(raw)
    if not isinstance(section, Mapping):
        return settings, [f"K1412 settings must be an object under '{c.SETTINGS_SECTION}'; the previous settings are kept."]
    problems: list[str] = []
    changes: dict[str, Any] = {}
    for key, value in section.items():
        spec = _FIELDS.get(key)
        if spec is None and key in CLIENT_SIDE_KEYS:
            continue  # the editor's own settings (e.g. VS Code's k1412.server.command) travel in the same section
        if spec is None:
            known = ", ".join(f"{c.SETTINGS_SECTION}.{name}" for name in _FIELDS)
            problems.append(f"Unknown setting '{c.SETTINGS_SECTION}.{key}' was ignored; known settings: {known}.")
            continue
        name, kind, described = spec
        if value is None or (kind is str and isinstance(value, str) and not value.strip()):
            changes[name] = getattr(Settings(), name)
        elif isinstance(value, kind):
            changes[name] = value.strip() if isinstance(value, str) else value
        else:
            problems.append(
                f"Setting '{c.SETTINGS_SECTION}.{key}' must be {described}; its previous value is kept."
            )
    return replace(settings, **changes), problems
