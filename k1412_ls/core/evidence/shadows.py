"""Workspace modules that shadow a Python test runner.

``python3 -m pytest`` (and ``-m unittest``, ``-m doctest``, ``python3 tests/test_x.py``) puts a
directory of the workspace first on the import path: the invocation's directory (``-m``) or the
script's. A ``pytest/`` package, ``pytest.py``, ``_pytest/`` or ``unittest.py`` there, or a module named
like a library the runner imports after start-up (``inspect.py``, ``argparse.py`` …), is imported
instead of the real one and can print any summary it likes. Such a run proves nothing.

Modules already in the workspace when the run starts are found through the run's target resolver
(root only; recorded in ``run.created`` so a replay judges the same); modules the run itself creates
or changes are read from its write entries, file tools and commands alike.
"""

from __future__ import annotations

from collections.abc import Callable

# The runners, the libraries they import, and the standard-library modules a ``python3 -m pytest`` or
# ``-m unittest`` session imports after the interpreter's start-up (measured with ``-X importtime``;
# built-in modules, which a file cannot shadow, left out).
SHADOW_MODULES: frozenset[str] = frozenset({
    "pytest", "_pytest", "py", "pluggy", "iniconfig", "packaging", "exceptiongroup", "tomli", "colorama",
    "pygments", "unittest", "doctest",
    *"""argparse array ast asyncio base64 bdb binascii bisect bz2 cProfile calendar cmd code codeop collections
    concurrent contextlib contextvars copy copyreg csv ctypes dataclasses datetime decimal difflib dis email enum
    fcntl fnmatch fractions functools gettext glob gzip hashlib heapq hmac http importlib inspect ipaddress json
    keyword linecache locale logging lzma math netrc numbers opcode operator pathlib pdb pkgutil platform pprint
    profile pstats pyexpat queue quopri random re readline reprlib runpy select selectors shlex shutil signal
    socket ssl statistics string struct subprocess sysconfig tempfile textwrap threading timeit token tokenize
    traceback types typing unicodedata urllib uuid warnings weakref xml zipfile zlib zoneinfo""".split(),
})


def probe_shadows(resolve: Callable[[str], tuple[str, bool]]) -> tuple[str, ...]:
    """Root paths of the workspace that shadow a runner module (``pytest/``, ``inspect.py``), found with the
    run's resolver. Each probe names a path with a slash (``inspect.py/`` is the file ``inspect.py``), so the
    resolver checks that one path and never searches the tree."""
    found: list[str] = []
    for name in sorted(SHADOW_MODULES):
        for probe, shown in ((f"{name}.py/", f"{name}.py"), (f"{name}/__init__.py", f"{name}/")):
            _path, exists = resolve(probe)
            if exists:
                found.append(shown)
    return tuple(found)


def shadowed_module(path: str, import_dir: str) -> str | None:
    """The runner module a workspace file shadows when ``import_dir`` is first on the import path."""
    clean = path.removeprefix("./")
    if import_dir not in ("", "."):
        prefix = import_dir.rstrip("/") + "/"
        if not clean.startswith(prefix):
            return None
        clean = clean[len(prefix):]
    head, _, rest = clean.partition("/")
    if not rest and head.endswith(".py") and head[:-3] in SHADOW_MODULES:
        return head
    if rest and head in SHADOW_MODULES and rest.endswith(".py"):
        return head + "/"
    return None
