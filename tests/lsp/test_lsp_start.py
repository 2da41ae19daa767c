"""What a server costs before anyone asks it for anything: the redaction patterns load only when needed,
and the LSP types' generated methods are compiled once and loaded from the state directory after."""

from __future__ import annotations

import contextlib
import json
import marshal
import os
import stat
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
from lsprotocol import types

from k1412_ls.lsp import protocol
from k1412_ls.lsp.server import build_server
from k1412_ls.lsp.startup_cache import CompileCache, cached_attrs_compile


@pytest.fixture
def no_redactor() -> Iterator[None]:
    saved = protocol.K1412Protocol._redactor
    protocol.K1412Protocol._redactor = None
    try:
        yield
    finally:
        protocol.K1412Protocol._redactor = saved


def test_a_new_server_has_not_built_the_redactor(no_redactor: None) -> None:
    # pygls reads every attribute of the protocol when it makes it; a property that built the redactor
    # made every start pay for it (~60 ms and ~1.5 MiB before the initialize reply).
    server = build_server()
    assert server.protocol is not None
    assert protocol.K1412Protocol._redactor is None


def test_the_first_error_reply_builds_it_and_redacts(no_redactor: None, monkeypatch: pytest.MonkeyPatch) -> None:
    key = "sk-proj-" + "Zq7" * 16
    monkeypatch.setenv("OPENAI_API_KEY", key)
    server = build_server()
    error = types.ResponseError(code=-32602, message=f"unknown model {key}")
    sent = server.protocol.filter_error(error)
    assert protocol.K1412Protocol._redactor is not None
    assert key not in sent.message and "unknown model" in sent.message


# --------------------------------------------------------------------------- the start-up code cache
def _define(name: str) -> type:
    """A fresh attrs class (its methods are generated and compiled, like each LSP type's)."""
    import attr

    return attr.define(type(name, (), {"__annotations__": {"x": int}, "__module__": __name__}))


def _two_starts(directory: Path, name: str = "Point") -> tuple[CompileCache | None, CompileCache | None]:
    with cached_attrs_compile(directory) as first:
        _define(name)(1)
    with cached_attrs_compile(directory) as second:
        cls = _define(name)
        point = cls(2)
        assert point.x == 2 and point == cls(2) and point != cls(3) and repr(point).endswith("(x=2)")
    return first, second


def test_the_second_start_loads_what_the_first_compiled(tmp_path: Path) -> None:
    first, second = _two_starts(tmp_path / "cache")
    assert first is not None and second is not None
    assert first.hits == 0 and second.hits >= 1
    (kept,) = (tmp_path / "cache").glob("attrs-code-*.marshal")
    assert stat.S_IMODE(kept.stat().st_mode) == 0o600
    assert stat.S_IMODE((tmp_path / "cache").stat().st_mode) == 0o700
    import attr._make

    assert "compile" not in vars(attr._make)  # the hook is gone once the types are defined


def _poison(directory: Path, name: str) -> None:
    """Rewrite each kept entry so that running it also raises a flag (what a planted file would do)."""
    with cached_attrs_compile(directory) as cache:
        _define(name)
    assert cache is not None
    planted = CompileCache(cache.path)
    planted.load()
    assert planted.index
    for key, (at, size) in planted.index.items():
        original = marshal.loads(planted.block[at:at + size])
        planted.new[key] = marshal.dumps(compile("import builtins\nbuiltins.k1412_poisoned = True\n",
                                                 original.co_filename, "exec"))
    planted.index = {}
    planted.save()


@pytest.mark.parametrize("spoil", ["none", "group-writable file", "world-writable dir", "symlink"])
def test_a_cache_file_others_could_write_is_never_run(tmp_path: Path, spoil: str) -> None:
    import builtins

    directory = tmp_path / "cache"
    _poison(directory, "Planted")
    (path,) = directory.glob("attrs-code-*.marshal")
    if spoil == "group-writable file":
        path.chmod(0o620)
    elif spoil == "world-writable dir":
        directory.chmod(0o777)
    elif spoil == "symlink":
        real = tmp_path / "elsewhere.marshal"
        path.rename(real)
        path.symlink_to(real)
    vars(builtins).pop("k1412_poisoned", None)
    try:
        with cached_attrs_compile(directory), contextlib.suppress(Exception):
            _define("Planted")
        ran = vars(builtins).pop("k1412_poisoned", False)
    finally:
        vars(builtins).pop("k1412_poisoned", None)
    # Control: a private file of this user's is trusted (and its code runs); any other shape is not read.
    assert ran is (spoil == "none")


def test_a_damaged_cache_is_compiled_around_and_replaced(tmp_path: Path) -> None:
    directory = tmp_path / "cache"
    with cached_attrs_compile(directory) as cache:
        _define("Damaged")
    assert cache is not None
    cache.path.write_bytes(b"\x00not marshal")
    cache.path.chmod(0o600)
    with cached_attrs_compile(directory) as again:
        assert _define("Damaged")(3).x == 3
    assert again is not None and again.hits == 0
    reread = CompileCache(cache.path)
    reread.load()
    assert reread.index  # written anew


def test_an_unwritable_state_directory_only_costs_the_compile(tmp_path: Path) -> None:
    blocker = tmp_path / "file"
    blocker.write_text("not a directory")
    with cached_attrs_compile(blocker / "cache") as cache:
        assert _define("Unwritable")(4).x == 4
    assert cache is not None and cache.hits == 0
    assert blocker.read_text() == "not a directory"


@pytest.mark.e2e
def test_the_real_server_keeps_the_code_in_its_state_directory(tmp_path: Path) -> None:
    frame = _initialize_frame()
    env = {**os.environ, "K1412_HOME": str(tmp_path / "state")}
    for _ in range(2):
        done = subprocess.run([sys.executable, "-m", "k1412_ls.cli", "lsp"], input=frame, capture_output=True,
                              env=env, timeout=60, check=False)
        assert b'"id": 1' in done.stdout and b'"capabilities"' in done.stdout, done.stderr[-2000:]
    (kept,) = (tmp_path / "state" / "cache").glob("attrs-code-*.marshal")
    cache = CompileCache(kept)
    cache.load()
    assert len(cache.index) > 400  # the LSP types' methods


def _initialize_frame() -> bytes:
    body = json.dumps({"jsonrpc": "2.0", "id": 1, "method": "initialize",
                       "params": {"processId": None, "rootUri": None, "capabilities": {}}}).encode()
    return b"Content-Length: %d\r\n\r\n" % len(body) + body


def test_a_save_keeps_what_this_start_used_and_compiled_only(tmp_path: Path) -> None:
    directory = tmp_path / "cache"
    with cached_attrs_compile(directory):
        _define("Kept")
        _define("Gone")  # e.g. what an older attrs wrote: not asked for again below
    with cached_attrs_compile(directory) as cache:
        _define("Kept")
        _define("Added")
    assert cache is not None and cache.hits >= 1
    reread = CompileCache(cache.path)
    reread.load()
    names = {marshal.loads(reread.block[at:at + size]).co_filename for at, size in reread.index.values()}
    assert any("Kept" in n for n in names) and any("Added" in n for n in names), names
    assert not any("Gone" in n for n in names), names
