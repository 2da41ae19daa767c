"""Giving freed memory back to the system after a run (glibc only; elsewhere nothing happens).

A run allocates and frees tens of MiB (tool output, HTTP buffers, event payloads); glibc keeps
freed pages, so a long-lived server's RSS would step up to the largest run's high-water mark
and stay there. ``malloc_trim(0)`` returns them; it runs off the event loop after each run.
"""

from __future__ import annotations

import ctypes
import ctypes.util
import functools
import logging
from typing import Any

log = logging.getLogger("k1412.lsp")


@functools.lru_cache(maxsize=1)
def _malloc_trim() -> Any:
    try:
        libc = ctypes.CDLL(ctypes.util.find_library("c") or "libc.so.6")
        return libc.malloc_trim
    except (OSError, AttributeError):  # not glibc
        return None


def trim_heap() -> bool:
    """Return freed heap pages to the system; False where the C library cannot."""
    trim = _malloc_trim()
    if trim is None:
        return False
    trim(0)
    return True
