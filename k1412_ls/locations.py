"""Where configuration and state live; no pydantic here, so the language server starts lean."""

from __future__ import annotations

import os
from pathlib import Path


class ConfigError(Exception):
    """A configuration problem, stated as one sentence for the user."""


def find_config_file(explicit: str | None, workspace: Path | None) -> Path | None:
    """Return the first configuration file of the configuration search order, if any."""
    if explicit:
        path = Path(explicit).expanduser()
        if not path.is_file():
            raise ConfigError(f"Configuration file {path} does not exist.")
        return path
    env_path = os.environ.get("K1412_CONFIG")
    if env_path:
        path = Path(env_path).expanduser()
        if not path.is_file():
            raise ConfigError(f"Configuration file {path} (from $K1412_CONFIG) does not exist.")
        return path
    candidates: list[Path] = []
    if workspace is not None:
        candidates.append(workspace / ".k1412" / "config.toml")
    xdg = os.environ.get("XDG_CONFIG_HOME") or str(Path.home() / ".config")
    candidates.append(Path(xdg) / "k1412" / "config.toml")
    return next((path for path in candidates if path.is_file()), None)


def state_dir() -> Path:
    """The state directory: ``$K1412_HOME``, else ``$XDG_DATA_HOME/k1412``."""
    home = os.environ.get("K1412_HOME")
    if home:
        return Path(home).expanduser()
    xdg = os.environ.get("XDG_DATA_HOME") or str(Path.home() / ".local" / "share")
    return Path(xdg) / "k1412"
