"""The methods attrs writes for the LSP types, compiled once and kept between server starts.

Importing ``lsprotocol.types`` defines some 580 attrs classes, and attrs writes each class's
``__init__``, ``__eq__``, ``__repr__``… as Python source and compiles it: about 0.3 s of every
start, a third of the time to the ``initialize`` reply. The same source always compiles to the same
code, so the first start keeps the compiled code in the state directory (one marshal file per Python
version) and later starts load it instead of compiling.

Trust: the file holds code the server runs, so it is read only when it is a regular file owned by
this user in a directory owned by this user, neither writable by group or others (the state directory
is hidden from the model's commands and file tools). Anything else, or a file that does not load, and
attrs compiles as it always does. The hook exists only while :func:`cached_attrs_compile` is active,
and only where attrs' private ``_compile_and_eval`` still calls the builtin ``compile`` by name
(checked on the code object, not assumed).
"""

from __future__ import annotations

import contextlib
import importlib.util
import logging
import marshal
import os
import stat
import sys
from collections.abc import Iterator
from pathlib import Path
from types import CodeType, ModuleType
from typing import Any

from k1412_ls.locations import state_dir

log = logging.getLogger(__name__)

MAX_CACHE_BYTES = 32 * 1024 * 1024
PREFIX = "attrs-code-"

try:  # the small builtin module: hashlib would load OpenSSL (~0.6 MiB) into every idle server
    from _blake2 import blake2b as _blake2b
except ImportError:  # pragma: no cover - CPython always has it; other interpreters may not
    from hashlib import blake2b as _blake2b


def _key(source: str, filename: str, mode: str) -> bytes:
    return _blake2b(f"{filename}\0{mode}\0{source}".encode("utf-8", "surrogatepass"), digest_size=20).digest()


def _attrs_make() -> ModuleType | None:
    """attrs' class-building module when its code generator calls ``compile`` through its globals."""
    try:
        import attr._make as make
    except ImportError:
        return None
    target = getattr(make, "_compile_and_eval", None)
    code = getattr(target, "__code__", None)
    if not isinstance(code, CodeType) or "compile" not in code.co_names or "compile" in vars(make):
        return None
    return make


def cache_file(directory: Path | None = None) -> Path | None:
    """Where this interpreter keeps the compiled code; None when attrs cannot be hooked.

    (Not named after attrs' version: reading ``attr.__version__`` loads importlib.metadata, ~1.5 MiB. A
    new attrs writes other source, so its entries are new keys; a save keeps only what this start used.)
    """
    if _attrs_make() is None:
        return None
    tag = sys.implementation.cache_tag or sys.implementation.name
    return (directory or state_dir() / "cache") / f"{PREFIX}{tag}-{importlib.util.MAGIC_NUMBER.hex()}.marshal"


def _trusted_dir(directory: Path) -> bool:
    """A directory of this user's that nobody else can write."""
    try:
        info = os.stat(directory)
    except OSError:
        return False
    return stat.S_ISDIR(info.st_mode) and _owned_and_private(info)


def _owned_and_private(info: os.stat_result) -> bool:
    return info.st_uid == os.geteuid() and not info.st_mode & (stat.S_IWGRP | stat.S_IWOTH)


MAGIC = b"K1412AC1"
_HEADER = len(MAGIC) + 8  # magic, then the index's length (8 bytes, little-endian)


class CompileCache:
    """A ``compile`` for attrs' generated source: kept code when the same source was compiled before.

    The file is an index (key -> offset and length) and one block of marshalled code objects; each
    code object is made only when its source comes up and is not held afterwards, so loading it costs
    no more memory than compiling would (the server's idle RSS is a target).
    """

    def __init__(self, path: Path) -> None:
        self.path = path
        self.index: dict[bytes, tuple[int, int]] = {}
        self.block = memoryview(b"")
        self.new: dict[bytes, bytes] = {}
        self.used: set[bytes] = set()
        self.hits = 0

    def load(self) -> None:
        """Take the kept code when the file and its directory are this user's alone (checked on what was opened)."""
        if not _trusted_dir(self.path.parent):
            return
        try:
            fd = os.open(self.path, os.O_RDONLY | os.O_NOFOLLOW | os.O_CLOEXEC)
        except OSError:
            return  # none yet (or a symlink: never followed)
        try:
            with os.fdopen(fd, "rb") as handle:
                info = os.fstat(handle.fileno())
                if not stat.S_ISREG(info.st_mode) or not _owned_and_private(info) or info.st_size > MAX_CACHE_BYTES:
                    return
                data = handle.read(MAX_CACHE_BYTES + 1)
            if not data.startswith(MAGIC):
                raise ValueError("not a start-up code cache")
            length = int.from_bytes(data[len(MAGIC):_HEADER], "little")
            index = marshal.loads(data[_HEADER:_HEADER + length])
            block = memoryview(data)[_HEADER + length:]
            if not isinstance(index, dict):
                raise ValueError("no index")
        except (OSError, EOFError, ValueError, TypeError):
            log.info("the start-up code cache %s did not load; compiling as usual", self.path)
            return
        self.block = block
        self.index = {k: v for k, v in index.items() if isinstance(k, bytes) and isinstance(v, tuple)
                      and len(v) == 2 and all(isinstance(n, int) for n in v) and 0 <= v[0] <= v[0] + v[1] <= len(block)}

    def _kept(self, key: bytes) -> CodeType | None:
        where = self.index.get(key)
        if where is None:
            return None
        try:
            code = marshal.loads(self.block[where[0]:where[0] + where[1]])
        except (EOFError, ValueError, TypeError):
            return None
        return code if isinstance(code, CodeType) else None

    def compile(self, source: Any, filename: Any, mode: Any, *args: Any, **kwargs: Any) -> Any:
        if args or kwargs or not (isinstance(source, str) and isinstance(filename, str) and mode == "exec"):
            return compile(source, filename, mode, *args, **kwargs)
        key = _key(source, filename, mode)
        code = self._kept(key)
        if code is not None:
            self.hits += 1
            self.used.add(key)
            return code
        code = compile(source, filename, mode)
        self.new[key] = marshal.dumps(code)
        return code

    def save(self) -> None:
        """Write the cache when this start compiled anything new: what it used and what it compiled."""
        if not self.new:
            return
        directory = self.path.parent
        try:
            directory.mkdir(mode=0o700, parents=True, exist_ok=True)
            if not _trusted_dir(directory):
                return
            for stale in directory.glob(f"{PREFIX}*.marshal"):
                if stale != self.path:
                    stale.unlink(missing_ok=True)
            entries = {key: bytes(self.block[at:at + size]) for key, (at, size) in self.index.items()
                       if key in self.used}  # what another attrs version wrote goes
            entries.update(self.new)
            index: dict[bytes, tuple[int, int]] = {}
            offset = 0
            for key, blob in entries.items():
                index[key] = (offset, len(blob))
                offset += len(blob)
            head = marshal.dumps(index)
            import tempfile

            fd, temp = tempfile.mkstemp(prefix=".attrs-code-", dir=directory)
            try:
                with os.fdopen(fd, "wb") as handle:
                    handle.write(MAGIC + len(head).to_bytes(8, "little") + head)
                    handle.writelines(entries.values())
                os.replace(temp, self.path)
            except BaseException:
                with contextlib.suppress(OSError):
                    os.unlink(temp)
                raise
        except OSError as exc:
            log.info("the start-up code cache could not be written (%s); the next start compiles again", exc)

    def drop(self) -> None:
        self.index, self.block, self.new, self.used = {}, memoryview(b""), {}, set()


@contextlib.contextmanager
def cached_attrs_compile(directory: Path | None = None) -> Iterator[CompileCache | None]:
    """While active, attrs compiles through the cache; on leaving, new code is saved and the hook removed."""
    make = _attrs_make()
    path = cache_file(directory)
    if make is None or path is None:
        yield None
        return
    cache = CompileCache(path)
    cache.load()
    make.compile = cache.compile  # type: ignore[attr-defined]
    try:
        yield cache
    finally:
        with contextlib.suppress(AttributeError):
            del make.compile  # type: ignore[attr-defined]
        cache.save()
        cache.drop()


__all__ = ["CompileCache", "cache_file", "cached_attrs_compile"]
