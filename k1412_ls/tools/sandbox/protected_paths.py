"""The paths K1412 keeps from commands and file tools, wherever the workspace lies.

* **hidden** (never visible): K1412's state directory and ``--events``
  targets (registered by the runtime), its configuration directory, the
  secret paths under ``$HOME`` (:data:`SECRET_PATHS`), shell history and
  profile files (:data:`HISTORY_FILES`, :data:`PROFILE_FILES`), and where the
  standard variables of secret stores point (:data:`SECRET_STORE_VARS`:
  ``GNUPGHOME``, ``KUBECONFIG``, ``AWS_SHARED_CREDENTIALS_FILE``, …);
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
from collections.abc import Mapping
from pathlib import Path

from k1412_ls.tools.sandbox.bubblewrap import bubblewrap
from k1412_ls.tools.sandbox.inward_links import inward_link_targets
from k1412_ls.tools.sandbox.mounts import inside
from k1412_ls.tools.sandbox.path_trace import KeptResolution

# Relative to $HOME: never visible to a command (an empty directory or /dev/null in their place).
SECRET_PATHS: tuple[str, ...] = (
    ".ssh", ".aws", ".gnupg", ".netrc", ".config/gcloud", ".azure", ".kube", ".docker/config.json",
    ".git-credentials", ".config/gh", ".pypirc", ".npmrc", ".cargo/credentials", ".cargo/credentials.toml",
    ".config/hub", ".password-store", ".local/share/keyrings", ".vault-token", ".terraform.d/credentials.tfrc.json",
    ".terraformrc", ".pgpass", ".my.cnf", ".mylogin.cnf", ".config/rclone", ".config/borg", ".config/sops",
    ".gem/credentials", ".huggingface/token", ".cache/huggingface/token", ".config/op", ".docker/.token_seed",
    ".kube/config", ".local/share/password-store", ".s3cfg", ".boto", ".config/gcloud/credentials.db",
)
# Relative to $HOME: shell history and profile files, hidden by default (keys pasted at a prompt or
# exported in a profile). Hidden also means read-only: /dev/null cannot be written through the cover.
HISTORY_FILES: tuple[str, ...] = (
    ".bash_history", ".zsh_history", ".zhistory", ".histfile", ".sh_history", ".python_history",
    ".node_repl_history", ".psql_history", ".mysql_history", ".sqlite_history", ".rediscli_history",
    ".irb_history", ".pry_history", ".lesshst", ".viminfo", ".gdb_history", ".wget-hsts", ".Rhistory",
    ".local/share/fish/fish_history", ".config/fish/fish_history", ".local/share/nvim/shada",
    ".ipython/profile_default/history.sqlite", ".julia/logs/repl_history.jl", ".cache/ipython",
)
PROFILE_FILES: tuple[str, ...] = (
    ".profile", ".bashrc", ".bash_profile", ".bash_login", ".bash_logout", ".zshrc", ".zshenv", ".zprofile",
    ".zlogin", ".zlogout", ".config/fish", ".pam_environment", ".config/environment.d", ".xprofile", ".xinitrc",
)
# Variables that move a secret store away from its default place: where they point is hidden too.
# "list": a colon-separated list of paths; "parent": the socket's directory (an agent's own).
SECRET_STORE_VARS: dict[str, str] = {
    "GNUPGHOME": "path", "KUBECONFIG": "list", "AWS_SHARED_CREDENTIALS_FILE": "path", "AWS_CONFIG_FILE": "path",
    "AWS_WEB_IDENTITY_TOKEN_FILE": "path", "DOCKER_CONFIG": "path", "GH_CONFIG_DIR": "path",
    "PASSWORD_STORE_DIR": "path", "NETRC": "path", "GOOGLE_APPLICATION_CREDENTIALS": "path",
    "CLOUDSDK_CONFIG": "path", "AZURE_CONFIG_DIR": "path", "PGPASSFILE": "path", "PGSERVICEFILE": "path",
    "MYSQL_HOME": "path", "TF_CLI_CONFIG_FILE": "path", "NPM_CONFIG_USERCONFIG": "path",
    "npm_config_userconfig": "path", "PIP_CONFIG_FILE": "path", "HF_TOKEN_PATH": "path", "RCLONE_CONFIG": "path",
    "SOPS_AGE_KEY_FILE": "path", "BORG_KEYS_DIR": "path", "BORG_SECURITY_DIR": "path", "VAULT_CONFIG_PATH": "path",
    "KRB5CCNAME": "path", "BOTO_CONFIG": "path", "S3CMD_CONFIG": "path", "GIT_CREDENTIALS_FILE": "path",
    "SSH_AUTH_SOCK": "parent", "GPG_AGENT_INFO": "parent", "HISTFILE": "path", "PYTHON_HISTORY": "path",
    "NODE_REPL_HISTORY": "path", "PSQL_HISTORY": "path", "MYSQL_HISTFILE": "path", "LESSHISTFILE": "path",
    "SQLITE_HISTORY": "path", "REDISCLI_HISTFILE": "path",
}
# Relative to a variable's directory: the credential files inside a tool home it names.
SECRET_STORE_PARTS: dict[str, tuple[str, ...]] = {
    "CARGO_HOME": ("credentials", "credentials.toml"), "HF_HOME": ("token", "stored_tokens"),
    "GRADLE_USER_HOME": ("gradle.properties",), "POETRY_CONFIG_DIR": ("auth.toml",),
}
_NOT_AGENT_DIRS = ("/", "/tmp", "/var/tmp", "/run", "/dev/shm")
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
    dir, the secret paths, history and profile files under ``$HOME`` (a workspace that is, or holds, your
    home included) and the secret stores their standard variables point to."""
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
    places = [os.path.join(home, n) for n in STARTUP_FILES]
    places += [p for p in os.environ.get("PATH", "").split(":") if p.startswith("/")]
    return path in inward_link_targets(root, places)


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
    stores = secret_store_paths()
    return _HOME_HIDDEN.resolve((home, xdg_config, tuple(stores)),
                                lambda: [str(config_dir()), *(os.path.join(home, n) for n in home_hidden_names()),
                                         *stores])


def secret_store_paths(env: Mapping[str, str] | None = None) -> list[str]:
    """Where the variables of :data:`SECRET_STORE_VARS` and :data:`SECRET_STORE_PARTS` point (absolute, unresolved)."""
    source = os.environ if env is None else env
    found: list[str] = []
    for name, kind in SECRET_STORE_VARS.items():
        value = source.get(name, "")
        if name == "KRB5CCNAME":
            value = value.removeprefix("FILE:").removeprefix("DIR:")
        elif name == "GPG_AGENT_INFO":
            value = value.split(":", 1)[0]
        for item in value.split(":") if kind == "list" else [value]:
            path = os.path.expanduser(item)
            if not path.startswith("/"):
                continue
            if kind == "parent":
                parent = os.path.dirname(os.path.normpath(path))
                # An agent's own directory (/tmp/ssh-XXXX) goes as a whole; a shared one keeps its other entries.
                found.append(path if parent in _NOT_AGENT_DIRS or parent == str(home_dir()) else parent)
            else:
                found.append(os.path.normpath(path))
    for name, parts in SECRET_STORE_PARTS.items():
        value = os.path.expanduser(source.get(name, ""))
        if value.startswith("/"):
            found += [os.path.join(value, part) for part in parts]
    return found


def home_hidden_names() -> tuple[str, ...]:
    """Everything hidden under ``$HOME`` by default: secret stores, history and profile files."""
    return (*SECRET_PATHS, *HISTORY_FILES, *PROFILE_FILES)


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


__all__ = [
    "HISTORY_FILES",
    "PROFILE_FILES",
    "SECRET_PATHS",
    "SECRET_STORE_VARS",
    "STARTUP_FILES",
    "config_dir",
    "hidden_from_file_tools",
    "hidden_paths",
    "hide_from_commands",
    "home_dir",
    "home_hidden_names",
    "installation_paths",
    "protected_from_file_writes",
    "secret_store_paths",
]
