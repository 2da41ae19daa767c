"""A small ``.gitignore`` matcher and the directory walker shared by list_files and search_files.

It implements the common gitignore rules (comments, ``!`` negation, ``/``
anchoring, trailing ``/`` for directories, ``*``, ``?``, ``[...]`` and
``**``) well enough that the pure-Python search fallback gives the same
results as ripgrep. Ignore files read: every ``.gitignore`` at or below the
walk's start, plus the workspace root's ``.gitignore`` when the walk starts
below the root (with the lowest precedence). ``.git`` is always skipped;
symlinks are never followed. Temp files of unfinished K1412 writes are never shown.
"""

from __future__ import annotations

import os
import stat
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from k1412_ls.tools.errors import ToolError
from k1412_ls.tools.files.confined import open_confined, open_dir_confined
from k1412_ls.tools.files.documents import is_write_temp
from k1412_ls.tools.files.globmatch import DIRS, MAX_GLOB_CHARS, GlobMatcher, Token, tokenize

MAX_IGNORE_FILE_BYTES = 1024 * 1024


@dataclass(frozen=True)
class Rule:
    """One compiled gitignore line."""

    matcher: GlobMatcher
    negate: bool
    dir_only: bool
    name_matcher: GlobMatcher

    def matches(self, rel: str, is_dir: bool) -> bool:
        return (is_dir or not self.dir_only) and self.matcher.match(rel)


def compile_rule(line: str) -> Rule | None:
    """Compile one line of a gitignore file (or one glob); None for blanks and comments."""
    line = line.rstrip("\n").rstrip("\r")
    if not line or line.startswith("#"):
        return None
    # Trailing spaces are ignored unless escaped with a backslash.
    stripped = line.rstrip(" ")
    if stripped.endswith("\\") and len(stripped) < len(line):
        stripped += " "
    line = stripped
    negate = line.startswith("!")
    if negate:
        line = line[1:]
    elif line.startswith("\\!") or line.startswith("\\#"):
        line = line[1:]
    dir_only = line.endswith("/") and not line.endswith("\\/")
    line = line.rstrip("/")
    if not line:
        return None
    if len(line) > MAX_GLOB_CHARS:
        return None  # longer than any real glob: ignored rather than matched (GlobFilter refuses it)
    anchored = "/" in line
    body = tokenize(line.lstrip("/"))
    prefix = [] if anchored else [Token(DIRS)]
    return Rule(GlobMatcher(prefix + body), negate, dir_only, GlobMatcher(body))


@dataclass(frozen=True)
class RuleSet:
    """The rules of one ignore file; ``base`` is its directory relative to the workspace root."""

    base: str
    rules: tuple[Rule, ...]

    def decide(self, rel: str, is_dir: bool) -> bool | None:
        """True ignored, False re-included, None when no rule of this file matches."""
        if self.base not in ("", "."):
            if not rel.startswith(self.base + "/"):
                return None
            rel = rel[len(self.base) + 1:]
        for rule in reversed(self.rules):
            if rule.matches(rel, is_dir):
                return not rule.negate
        return None


def load_rules(directory: Path, base: str, dir_fd: int | None = None) -> RuleSet | None:
    """The ``.gitignore`` of ``directory`` (opened below ``dir_fd`` when given) as a RuleSet, or None."""
    try:
        if dir_fd is None:
            fd = open_confined(directory / ".gitignore", os.O_RDONLY | os.O_NONBLOCK)
        else:
            fd = os.open(".gitignore", os.O_RDONLY | os.O_NONBLOCK | os.O_NOFOLLOW | os.O_CLOEXEC, dir_fd=dir_fd)
    except OSError:
        return None
    try:
        info = os.fstat(fd)
        if not stat.S_ISREG(info.st_mode) or info.st_size > MAX_IGNORE_FILE_BYTES:
            return None
        data = os.read(fd, MAX_IGNORE_FILE_BYTES)
    except OSError:
        return None
    finally:
        os.close(fd)
    text = data.decode("utf-8", errors="replace")
    rules = tuple(rule for rule in map(compile_rule, text.splitlines()) if rule is not None)
    return RuleSet(base, rules) if rules else None


def is_ignored(chain: tuple[RuleSet, ...], rel: str, is_dir: bool) -> bool:
    """Deeper ignore files win; within a file the last matching line wins."""
    for ruleset in reversed(chain):
        decision = ruleset.decide(rel, is_dir)
        if decision is not None:
            return decision
    return False


def _never(name: str) -> bool:
    return False


class GlobFilter:
    """A ``glob`` argument: gitignore-style, relative to the workspace root; ``!`` excludes.

    Like ripgrep's ``--glob`` it overrides the ignore files: a matching
    positive glob includes a file even if it is gitignored (inside a
    directory that is not pruned), a matching ``!`` glob excludes, and with a
    positive glob every other file is excluded while directories fall back
    to the ignore files.
    """

    def __init__(self, glob: str | None) -> None:
        if glob and len(glob) > MAX_GLOB_CHARS:
            raise ToolError(f"The glob is {len(glob)} characters long; at most {MAX_GLOB_CHARS} are accepted.")
        self.rule = compile_rule(glob) if glob else None
        self._name_match = None
        body = (glob or "").lstrip("!").rstrip("/")
        if self.rule is not None and "/" not in body and "**" not in body:
            # No '/' and no '**': the glob can only ever match the last path component, so the
            # name alone is matched (the same answer as the whole path, without its prefix).
            self._name_match = self.rule.name_matcher.match
        # For the walker's first pass: a file (symlink, other) whose name this returns None for is
        # excluded by a positive glob whatever else holds; None when names alone cannot tell.
        self.file_name_match: Any = None
        if self.rule is not None and not self.rule.negate:
            if self.rule.dir_only:
                self.file_name_match = _never
            elif self._name_match is not None:
                self.file_name_match = self._name_match

    def decide(self, rel: str, is_dir: bool, name: str | None = None) -> bool | None:
        """True excluded, False included, None when the ignore files decide (``name``: rel's last part)."""
        rule = self.rule
        if rule is None:
            return None
        if name is not None and self._name_match is not None:
            hit = (is_dir or not rule.dir_only) and self._name_match(name)
        else:
            hit = rule.matches(rel, is_dir)
        if hit:
            return rule.negate
        if not rule.negate and not is_dir:
            return True
        return None


@dataclass(frozen=True, slots=True)
class Entry:
    """One directory entry met by the walker (never followed if a symlink)."""

    rel: str
    parent: Path
    name: str
    kind: str  # file | dir | symlink | other
    depth: int

    @property
    def path(self) -> Path:
        return self.parent / self.name  # built on demand: most entries met are never opened


def initial_chain(root: Path, start: Path) -> tuple[RuleSet, ...]:
    """Ignore rules that apply before the walk reads ``start``'s own ``.gitignore``."""
    if start == root:
        return ()
    top = load_rules(root, "")
    return (top,) if top else ()


def list_children(directory: Path, rel: str, chain: tuple[RuleSet, ...], depth: int,
                  glob: GlobFilter) -> tuple[list[Entry], tuple[RuleSet, ...]]:
    """The visible children of ``directory`` in name order, and the ignore chain for them.

    The directory is opened without following symlinks from the pinned root, so
    one swapped for a symlink after it was listed is not listed through.
    """
    try:
        dir_fd = open_dir_confined(directory)
    except OSError:
        return [], chain
    try:
        own = load_rules(directory, rel, dir_fd)
        if own is not None:
            chain = (*chain, own)
        kinds: dict[str, str] = {}
        name_match = glob.file_name_match
        with os.scandir(dir_fd) as it:
            for item in it:
                # The type comes from the listing itself (d_type; an lstat only where it is unknown).
                name = item.name
                try:
                    if item.is_dir(follow_symlinks=False):
                        kinds[name] = "dir"
                    elif name_match is not None and not name_match(name):
                        continue  # a file the glob excludes: nothing more to learn about it
                    elif item.is_symlink():
                        kinds[name] = "symlink"
                    elif item.is_file(follow_symlinks=False):
                        kinds[name] = "file"
                    else:
                        kinds[name] = "other"
                except OSError:  # gone since it was listed
                    continue
    except OSError:
        return [], chain
    finally:
        os.close(dir_fd)
    entries: list[Entry] = []
    prefix = f"{rel}/" if rel not in ("", ".") else ""
    for name in sorted(kinds):
        if name == ".git" or (name.startswith(".k1412-") and is_write_temp(name)):
            continue
        child_rel = prefix + name
        kind = kinds[name]
        is_dir = kind == "dir"
        decision = glob.decide(child_rel, is_dir, name) if glob.rule is not None else None
        if decision if decision is not None else chain and is_ignored(chain, child_rel, is_dir):
            continue
        entries.append(Entry(child_rel, directory, name, kind, depth))
    return entries, chain


def walk_files(root: Path, start: Path, glob: GlobFilter) -> Iterator[Entry]:
    """Regular files below ``start`` depth-first in path order (ripgrep's ``--sort path`` order)."""
    start_rel = "" if start == root else start.relative_to(root).as_posix()
    children, chain = list_children(start, start_rel, initial_chain(root, start), 1, glob)
    # An explicit stack of iterators: deep trees must not hit Python's recursion limit.
    stack: list[tuple[Iterator[Entry], tuple[RuleSet, ...]]] = [(iter(children), chain)]
    while stack:
        iterator, chain = stack[-1]
        child = next(iterator, None)
        if child is None:
            stack.pop()
            continue
        if child.kind == "dir":
            grandchildren, child_chain = list_children(child.path, child.rel, chain, child.depth + 1, glob)
            stack.append((iter(grandchildren), child_chain))
        elif child.kind == "file":
            yield child
