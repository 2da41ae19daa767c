"""The paths K1412 keeps from commands and file tools, wherever the workspace lies.

* **hidden** (never visible): K1412's state directory and ``--events``
  targets (registered by the runtime), its configuration directory, and the
  secret paths under ``$HOME`` (:data:`SECRET_PATHS`);
* **protected** (read-only even inside a writable root): shell and login
  start-up files (:data:`STARTUP_FILES`), ``PATH`` directories and the
  installation K1412 itself runs from; with a workspace that is (or holds)
  ``$HOME``, every dot entry of ``$HOME`` too.

The sandbox mounts them (``tools.sandbox.command_sandbox``); the file tools refuse them
(``tools.files.workspace``).
"""

from __future__ import annotations

import os
import sys
import threading
from pathlib import Path

from k1412_ls.tools.sandbox.bubblewrap import bubblewrap
from k1412_ls.tools.sandbox.mounts import inside
from k1412_ls.tools.sandbox.path_trace import KeptResolution

# Relative to $HOME: never visible to a command (an empty directory or /dev/null in their place).
SECRET_PATHS: tuple[str, ...] = (
    ".ssh", ".aws", ".gnupg", ".netrc", ".config/gcloud", ".azure", ".kube", ".docker/config.json",
    ".git-credentials", ".config/gh", ".pypirc", ".npmrc", ".cargo/credentials", ".cargo/credentials.toml",
    ".config/hub", ".password-store", ".local/share/keyrings", ".vault-token", ".terraform.d/credentials.tfrc.json",
)
# Relative to $HOME: read-only even when they lie inside a writable root.
STARTUP_FILES: tuple[str, ...] = (
    ".bashrc", ".bash_profile", ".bash_login", ".bash_logout", ".profile", ".zshrc", ".zshenv", ".zprofile",
    ".zlogin", ".config/fish", ".inputrc", ".gitconfig", ".config/git", ".pam_environment", ".config/autostart",
    ".config/systemd", ".local/bin", "bin", ".config/environment.d",
)

# Process-wide hidden paths (the state directory, --events targets), registered by the runtime.
_HIDDEN: set[str] = set()
_HIDDEN_LOCK = threading.Lock()


def hide_from_commands(*paths: Path | str) -> None:
    """Hide ``paths`` (directories or files) from every sandboxed command started from now on."""
    with _HIDDEN_LOCK:
        _HIDDEN.update(os.path.realpath(p) for p in paths)


def hidden_paths() -> list[str]:
    with _HIDDEN_LOCK:
        return sorted(_HIDDEN)


def hidden_from_file_tools() -> list[str]:
    """What the file tools refuse wherever the workspace is: K1412's state and --events files, its config
    dir and the secret paths under ``$HOME`` (a workspace that is, or holds, your home included)."""
    return [*hidden_paths(), *_home_hidden(str(home_dir()), os.environ.get("XDG_CONFIG_HOME", ""))]


def protected_from_file_writes(path: str, root: str) -> bool:
    """Whether the file tools must not write ``path`` (resolved), as commands cannot: a start-up file, a
    ``PATH`` dir, K1412's installation; with a workspace ``root`` that is (or holds) ``$HOME``, anything
    under a dot entry of ``$HOME`` too (existing or not)."""
    home = os.path.realpath(home_dir())
    if any(inside(path, p) for p in _write_protected(home, os.environ.get("PATH", ""))):
        return True
    if inside(home, root) and inside(path, home) and path != home:
        return os.path.relpath(path, home).split(os.sep, 1)[0].startswith(".")
    return False


_WRITE_PROTECTED = KeptResolution()
_HOME_HIDDEN = KeptResolution()


def _write_protected(home: str, path_var: str) -> tuple[str, ...]:
    """Start-up files, PATH dirs and the installation, resolved as they are now (``tools.sandbox.path_trace``)."""
    def paths() -> list[str]:
        found = [os.path.join(home, name) for name in STARTUP_FILES]
        found += [p for p in path_var.split(":") if p.startswith("/")]
        return found + installation_paths()

    return _WRITE_PROTECTED.resolve((home, path_var), paths)


def _home_hidden(home: str, xdg_config: str) -> tuple[str, ...]:
    """K1412's config dir and the secret paths under ``home``, resolved as they are now; what a symlink
    led to before it was re-pointed stays refused."""
    return _HOME_HIDDEN.resolve((home, xdg_config),
                                lambda: [str(config_dir()), *(os.path.join(home, n) for n in SECRET_PATHS)])


def home_dir() -> Path:
    return Path(os.environ.get("HOME") or Path.home_dir())


def config_dir() -> Path:
    xdg = os.environ.get("XDG_CONFIG_HOME") or str(home_dir() / ".config")
    return Path(xdg) / "k1412"


def installation_paths() -> list[str]:
    """Where K1412 and its interpreter live: read-only to commands wherever they are."""
    import k1412_ls

    paths = {os.path.realpath(sys.prefix), os.path.realpath(os.path.dirname(k1412_ls.__file__))}
    box = bubblewrap()
    if box.path:
        paths.add(os.path.realpath(os.path.dirname(box.path)))
    return sorted(paths)


__all__ = ["SECRET_PATHS", "STARTUP_FILES", "config_dir", "hidden_from_file_tools", "hidden_paths", "hide_from_commands",
           "home_dir", "installation_paths", "protected_from_file_writes"]
