"""The files one approval check read to decide, and the exact bytes it read.

While :func:`judging` is active (one :meth:`ApprovalGate.check`), every script, makefile, ``package.json`` and
program file the check reads is recorded here by its resolved path with the bytes it judged. The command then
runs with those bytes bound read-only over the paths (``tools.sandbox.pinned_files``), so what the approval read
is what runs. A file reached through a symlink inside the workspace, or read twice with different bytes, is
noted as not pinnable: the link itself could be re-pointed after the check.
"""

from __future__ import annotations

import contextlib
import os
from collections.abc import Iterator
from contextvars import ContextVar
from dataclasses import dataclass, field
from pathlib import Path

from k1412_ls.tools.sandbox.pinned_files import MAX_COPY_BYTES, Judged, inside_any


@dataclass
class JudgedReads:
    """What one check read: resolved path → bytes (None: too large to copy), and why some cannot be pinned."""

    files: dict[str, bytes | None] = field(default_factory=dict)
    unpinnable: list[str] = field(default_factory=list)
    links: dict[str, str] = field(default_factory=dict)  # lexical path → resolved, where they differ
    absent: set[str] = field(default_factory=set)  # files the decision assumed missing (``make`` without a makefile)
    unpinned: set[str] = field(default_factory=set)  # judged, but the command itself rewrites them (``npm install``)


_CURRENT: ContextVar[JudgedReads | None] = ContextVar("k1412_judged_reads", default=None)


@contextlib.contextmanager
def judging() -> Iterator[JudgedReads]:
    """Record what the reads inside the block judge."""
    reads = JudgedReads()
    token = _CURRENT.set(reads)
    try:
        yield reads
    finally:
        _CURRENT.reset(token)


def record(path: Path, data: bytes | None, *, pin: bool = True) -> None:
    """Note that the check judged ``path`` to hold ``data`` (None: read the whole file now, when it is not too
    large); ``pin=False`` for a file the command rewrites as its job (it is judged, but not bound read-only)."""
    reads = _CURRENT.get()
    if reads is None:
        return
    real = os.path.realpath(path)
    if not pin:
        reads.unpinned.add(real)
    lexical = os.path.normpath(os.path.abspath(path))
    if lexical != real:
        reads.links[lexical] = real
    if data is None:
        try:
            if os.path.getsize(real) <= MAX_COPY_BYTES:
                with open(real, "rb") as handle:
                    data = handle.read(MAX_COPY_BYTES + 1)
        except OSError:
            return
    seen = reads.files.get(real)
    if seen is not None and data is not None and seen != data:
        reads.unpinnable.append(f"{path.name} changed while the check read it")
    reads.files[real] = data


def record_absent(path: Path) -> None:
    """Note that the decision assumed ``path`` does not exist."""
    reads = _CURRENT.get()
    if reads is not None:
        reads.absent.add(os.path.normpath(os.path.abspath(path)))


def linked_inside(reads: JudgedReads, root: Path) -> list[str]:
    """Judged files reached through a symbolic link that lies inside ``root`` (the link could be re-pointed)."""
    base = os.path.normpath(str(root))
    real_base = os.path.realpath(root)
    found = []
    for lexical, real in reads.links.items():
        if lexical == base or not lexical.startswith(base.rstrip("/") + "/"):
            continue
        if os.path.normpath(os.path.join(real_base, os.path.relpath(lexical, base))) != real:
            found.append(os.path.basename(lexical))
    return found


def judged_files(reads: JudgedReads, roots: list[str], workspace: Path, *, others: bool,
                 alone: bool) -> tuple[Judged, list[str]]:
    """The judged files a command could change (beneath the writable ``roots``), to pin, and why the check
    cannot trust them: another command of the run is running (``others``: it could rename over a path in its
    own mount namespace), or a judged file is reached through a symbolic link in the workspace while something
    could re-point it first (``alone``: the line is one simple command; a mount on a link lands on its target).
    """
    files = {p: d for p, d in reads.files.items() if inside_any(p, roots)}
    absent = [p for p in reads.absent if inside_any(os.path.realpath(p), roots)]
    unsure = list(reads.unpinnable)
    if others or not alone:
        unsure += [f"{name} is reached through a symbolic link in the workspace, which another command could "
                   "re-point after the check" for name in linked_inside(reads, workspace)]
    if (files or absent) and others:
        names = ", ".join(sorted({os.path.basename(p) for p in [*files, *absent]})[:3])
        unsure.append(f"another command of this run is running and could change {names} between this check "
                      "and the moment it runs")
    return tuple((p, d) for p, d in files.items() if p not in reads.unpinned), unsure


__all__ = ["JudgedReads", "judged_files", "judging", "linked_inside", "record", "record_absent"]
