"""Path confinement: every path a tool touches is resolved and checked here."""

from __future__ import annotations

import os
from pathlib import Path

from k1412_ls.tools.registry import ToolError


class Workspace:
    """The workspace root and the rules for paths inside it."""

    def __init__(self, root: Path | str) -> None:
        self.root = Path(os.path.realpath(root))

    def resolve(self, path: str, *, for_write: bool = False) -> Path:
        """Return the real, confined path for a user/model supplied path, or raise ToolError."""
        if "\x00" in path:
            raise ToolError("The path contains a NUL byte; pass a plain relative path.")
        candidate = Path(path) if os.path.isabs(path) else self.root / path
        real = Path(os.path.realpath(candidate))
        if not real.is_relative_to(self.root):
            raise ToolError(f"The path '{path}' is outside the workspace; use a path inside {self.root}.")
        if for_write and self.is_git_internal(real):
            raise ToolError(f"The path '{path}' is inside .git; file tools never write git internals.")
        return real

    def relative(self, path: Path) -> str:
        rel = path.relative_to(self.root).as_posix()
        return rel or "."

    def is_git_internal(self, real: Path) -> bool:
        rel = real.relative_to(self.root)
        return any(part.lower() == ".git" for part in rel.parts)
