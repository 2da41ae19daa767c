"""What a command sees of the home directory outside the workspace: an allow list, not "all but secrets".

``$HOME`` is covered by an empty read-only directory and only these come back,
read-only (:func:`home_shown`):

* the toolchains a command needs to run the user's compilers and interpreters:
  every ``PATH`` directory under ``$HOME`` with its toolchain (``~/.pyenv`` for
  ``~/.pyenv/shims``, ``~/.nvm/versions/node/v20`` for its ``bin``), and the
  roots named by ``PYENV_ROOT``, ``NVM_DIR``, ``CARGO_HOME``, ``RUSTUP_HOME``,
  ``VIRTUAL_ENV``, ``CONDA_PREFIX``, ``GOPATH``, ``GOROOT``, ``JAVA_HOME`` …
  when they lie under ``$HOME`` (:data:`TOOLCHAIN_VARS`);
* the caches and settings builds read (:data:`DEFAULT_SHOWN`): pip's, npm's,
  cargo's registry, ``~/.rustup``, Python's user site (``~/.local/lib/python*``),
  git's identity (``~/.gitconfig``);
* what the user lists in ``[sandbox] readable`` (user configuration only);
  ``"~"`` there shows all of ``$HOME`` (the secret stores stay hidden).

Directories the user made writable and the workspace are bound over this as
before. Secret stores inside what is shown stay hidden (``tools.sandbox.protected_paths``).
"""

from __future__ import annotations

import glob
import os
from collections.abc import Iterable, Mapping

from k1412_ls.tools.sandbox.mounts import MountPlan, inside
from k1412_ls.tools.sandbox.protected_paths import SECRET_STORE_PARTS, SECRET_STORE_VARS

# Relative to $HOME: shown read-only when they exist (a glob is expanded when the sandbox is planned).
DEFAULT_SHOWN: tuple[str, ...] = (
    ".gitconfig", ".config/git", ".cache/pip", ".cache/uv", ".cache/pypoetry", ".cache/pre-commit",
    ".local/lib/python*", ".npm/_cacache", ".cache/yarn", ".cache/pnpm", ".cargo/bin", ".cargo/registry",
    ".cargo/git", ".cargo/env", ".rustup", ".cache/go-build", "go/pkg/mod", ".m2/repository", ".gradle/caches",
    ".cache/ccache", ".ccache",
)
# Variables naming a toolchain's root: shown when they point under $HOME.
TOOLCHAIN_VARS: tuple[str, ...] = (
    "PYENV_ROOT", "NVM_DIR", "RUSTUP_HOME", "VIRTUAL_ENV", "CONDA_PREFIX", "GOROOT", "JAVA_HOME", "PIPX_HOME",
    "VOLTA_HOME", "BUN_INSTALL", "DENO_INSTALL", "SDKMAN_DIR", "PNPM_HOME", "POETRY_HOME",
)
# Of these, only the named parts (their other contents may hold credentials or unrelated data).
_PARTIAL_ROOTS: dict[str, tuple[str, ...]] = {"CARGO_HOME": ("bin", "registry", "git", "env"),
                                               "GOPATH": ("bin", "pkg/mod")}
# First components under $HOME that hold unrelated things beside a PATH directory: only the directory itself.
_SHARED_TOPS = frozenset({".local", ".config", ".cache", ".cargo", "bin", ".bin", "go", ".go"})
ALL_OF_HOME = "~"
# Every variable :func:`home_shown` and the secret-store covers read (a change plans the sandbox again).
VIEW_VARIABLES: tuple[str, ...] = (*TOOLCHAIN_VARS, *_PARTIAL_ROOTS, *SECRET_STORE_VARS, *SECRET_STORE_PARTS)


def veil_home(plan: MountPlan, home: str, shown: Iterable[tuple[str, str]]) -> None:
    """Cover ``home`` with an empty directory and bind ``shown`` (path, source) back read-only.

    The cover stays writable while bubblewrap makes the mount points of what
    is bound into it (these, the workspace, writable directories); the plan
    remounts it read-only at its end.
    """
    plan.flags += ["--tmpfs", home]
    plan.veiled.append(home)
    for path, source in shown:
        plan.show(source, path)


def home_cover(home: str, workspace: str, readable: Iterable[str]) -> str | None:
    """The home directory to cover (resolved), or None when commands see it as before.

    Not covered: ``"~"`` in ``readable``; a workspace that is, or holds, home
    (``tools.sandbox.command_sandbox`` locks its dot entries instead); a home
    under ``/tmp`` (the run's private ``/tmp`` covers it already); no home.
    """
    if any(inside(home, os.path.realpath(os.path.expanduser(p))) for p in readable if p.strip()):
        return None
    if home == "/" or not os.path.isdir(home) or inside(home, "/tmp") or inside(home, workspace):
        return None
    return home


def _toolchain_of(entry: str, home: str) -> str:
    """The directory to show for a ``PATH`` entry under ``home``: its toolchain root, or the entry itself."""
    top = os.path.relpath(entry, home).split(os.sep)
    if top[0] in _SHARED_TOPS or len(top) == 1:
        return entry
    parent = os.path.dirname(entry)
    if os.path.basename(entry) in ("bin", "shims", "sbin") and parent != home:
        # ~/.pyenv/shims -> ~/.pyenv (the shims exec its libexec and versions); ~/.nvm/versions/node/v20/bin -> v20
        return os.path.join(home, top[0]) if top[0] in (".pyenv", ".rbenv", ".nodenv", ".goenv") else parent
    return os.path.join(home, top[0])


def home_shown(home: str, env: Mapping[str, str], readable: Iterable[str]) -> list[str]:
    """The paths under ``home`` (as the command names them) shown read-only, shallowest first."""
    wanted: list[str] = [os.path.join(home, rel) for rel in DEFAULT_SHOWN]
    for entry in env.get("PATH", "").split(":"):
        if entry.startswith("/"):
            real = os.path.realpath(entry)
            for candidate in {os.path.normpath(entry), real}:
                if inside(candidate, home) and candidate != home:
                    wanted.append(_toolchain_of(candidate, home))
    for name in TOOLCHAIN_VARS:
        value = env.get(name, "")
        if value.startswith("/"):
            wanted.append(os.path.normpath(value))
    for name, parts in _PARTIAL_ROOTS.items():
        value = env.get(name, "")
        if value.startswith("/"):
            wanted += [os.path.join(value, part) for part in parts]
    wanted += [os.path.expanduser(p) for p in readable if p.strip()]
    shown: list[str] = []
    for pattern in wanted:
        for path in sorted(glob.glob(glob.escape(pattern) if "*" not in pattern else pattern)):
            path = os.path.normpath(path)
            if inside(path, home) and path != home and os.path.lexists(path):
                shown.append(path)
                real = os.path.realpath(path)
                if real != path and inside(real, home) and real != home:
                    shown.append(real)  # a link to elsewhere in home: shown where it leads too
    unique = dict.fromkeys(shown)
    # Shallowest first; a path under another shown one needs no mount of its own.
    ordered = sorted(unique, key=lambda p: (p.count("/"), p))
    return [p for i, p in enumerate(ordered) if not any(inside(p, q) for q in ordered[:i])]


__all__ = ["ALL_OF_HOME", "DEFAULT_SHOWN", "TOOLCHAIN_VARS", "VIEW_VARIABLES", "home_cover", "home_shown", "veil_home"]
