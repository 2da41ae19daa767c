"""Path confinement: every path a tool touches is resolved and checked here.

A path is confined when its *real* path (every symlink resolved) lies inside
the real workspace root. Lexical checks alone are not enough:
``os.path.join(root, "/etc/passwd")`` is ``/etc/passwd``, ``startswith("/ws")``
accepts ``/ws-evil``, and a symlinked parent directory leads anywhere. The
open-time re-check (every component opened without following symlinks, from
a descriptor of the root pinned when the workspace was first used) lives in
:mod:`k1412_ls.tools.files.confined`.
"""

from __future__ import annotations

import os
import unicodedata
from pathlib import Path

from k1412_ls.tools.errors import ToolError
from k1412_ls.tools.files.confined import pin_root, refuse_if_moved
from k1412_ls.tools.sandbox.mounts import inside
from k1412_ls.tools.sandbox.pinned_files import pinned_by_a_command
from k1412_ls.tools.sandbox.protected_paths import hidden_from_file_tools, protected_from_file_writes

MAX_PATH_BYTES = 4096
MAX_NAME_BYTES = 255

# Code points that HFS+ ignores in names, so ".g\u200cit" is ".git" there.
_IGNORABLE = dict.fromkeys(
    [0x200C, 0x200D, 0x200E, 0x200F, 0xFEFF, *range(0x202A, 0x202F), *range(0x206A, 0x2070)]
)


def is_git_name(name: str) -> bool:
    """True for a path component that a git client would treat as ``.git`` on some filesystem."""
    folded = unicodedata.normalize("NFC", name.translate(_IGNORABLE)).lower().rstrip(". ")
    return folded in (".git", "git~1")


def check_path_text(path: str) -> None:
    """Refuse path strings no filesystem call should ever see (NUL, over-long names)."""
    if "\x00" in path:
        raise ToolError("The path contains a NUL byte; pass a plain relative path.")
    encoded = os.fsencode(path)
    if len(encoded) > MAX_PATH_BYTES:
        raise ToolError(f"The path is longer than {MAX_PATH_BYTES} bytes; use a shorter path.")
    for part in encoded.split(b"/"):
        if len(part) > MAX_NAME_BYTES:
            raise ToolError(f"A path component is longer than {MAX_NAME_BYTES} bytes; use shorter names.")


def _is_bare_repository(directory: Path) -> bool:
    """A bare repository (``mirror.git/`` with ``HEAD``, ``objects/`` and ``refs/``): git internals throughout."""
    return (directory / "HEAD").is_file() and (directory / "objects").is_dir() and (directory / "refs").is_dir()


class Workspace:
    """The workspace root and the rules for paths inside it."""

    def __init__(self, root: Path | str) -> None:
        self.root = Path(os.path.realpath(root))
        # File tools open paths by walking from this descriptor (k1412_ls/tools/files/confined.py).
        pin_root(self.root)

    def resolve(self, path: str, *, for_write: bool = False) -> Path:
        """Return the real, confined path for a user/model supplied path, or raise ToolError.

        Relative paths are taken from the root; absolute paths are accepted
        when they lie inside it. With ``for_write`` the path must also not be
        (or lead through) git internals or a dangling symlink.
        """
        if not isinstance(path, str):
            raise ToolError("The path must be a string; pass a path relative to the workspace root.")
        check_path_text(path)
        refuse_if_moved(self.root)
        lexical = Path(path) if os.path.isabs(path) else self.root / path
        real = Path(os.path.realpath(lexical))
        if not real.is_relative_to(self.root):
            raise ToolError(
                f"The path '{path}' is outside the workspace; use a path inside {self.root}."
            )
        if any(inside(str(real), hidden) for hidden in hidden_from_file_tools()):
            # The path is not repeated: whatever it names in a hidden place stays out of results and logs.
            raise ToolError("That path is hidden from the agent (K1412's own state or configuration, or a secret "
                            "directory such as ~/.ssh); file tools never read, list or write it.")
        if for_write:
            if self.is_git_internal(real) or self._lexically_git(lexical):
                raise ToolError(
                    f"The path '{path}' is inside .git; file tools never write git internals, "
                    f"use git commands through run_command instead."
                )
            if protected_from_file_writes(str(real), str(self.root)):
                raise ToolError(f"The path '{path}' is protected (a shell start-up file, a PATH directory, K1412's own "
                                "installation, or a dot entry of your home); file tools never write it, as commands "
                                "cannot.")
            if pinned_by_a_command(str(real)):
                raise ToolError(f"The path '{path}' is in use by a running command, whose approval read it; it runs "
                                "as it was read, so the file tools do not change it until that command ends.")
            self._refuse_dangling_links(lexical, path)
        return real

    def relative(self, path: Path) -> str:
        """The workspace-relative POSIX form of a resolved path ("." for the root)."""
        rel = path.relative_to(self.root).as_posix()
        return rel or "."

    def is_git_internal(self, real: Path) -> bool:
        """True when a resolved path is ``.git``, lies below any ``.git`` (any case), or in the git dir
        that the root's ``.git`` pointer file names (``gitdir: .gitdir``)."""
        rel = real.relative_to(self.root)
        if any(is_git_name(part) for part in rel.parts):
            return True
        if any(_is_bare_repository(parent) for parent in [real, *real.parents][: len(rel.parts)]):
            return True
        gitdir = self._pointer_gitdir()
        return gitdir is not None and real.is_relative_to(gitdir)

    def _pointer_gitdir(self) -> Path | None:
        dot_git = self.root / ".git"
        if not dot_git.is_file() or dot_git.is_symlink():
            return None
        try:
            first = dot_git.read_text(encoding="utf-8", errors="replace").splitlines()[:1]
        except OSError:
            return None
        if not first or not first[0].startswith("gitdir:"):
            return None
        return Path(os.path.realpath(self.root / first[0][len("gitdir:"):].strip()))

    def _lexically_git(self, lexical: Path) -> bool:
        # A ".git" that is itself a symlink resolves elsewhere; the spelled path still names git.
        try:
            rel = Path(os.path.normpath(lexical)).relative_to(self.root)
        except ValueError:
            rel = Path(os.path.normpath(lexical))
        return any(is_git_name(part) for part in rel.parts)

    def _refuse_dangling_links(self, lexical: Path, shown: str) -> None:
        """Refuse writes that would create a file or directory through a dangling symlink."""
        current = Path(lexical.anchor)
        for part in lexical.parts[1:]:
            current = current / part
            if part in (".", ".."):
                continue
            if os.path.islink(current) and not os.path.exists(current):
                raise ToolError(
                    f"The path '{shown}' goes through a dangling symlink; "
                    f"write to the real file path or remove the broken link first."
                )
