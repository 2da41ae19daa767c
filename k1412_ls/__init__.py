"""K1412: an accountable coding agent that lives inside a language server."""

import os as _os
import sys as _sys

__version__ = "0.1.0"


def _drop_working_directory() -> None:
    """``python -m k1412_ls…`` puts the working directory first on ``sys.path``; in a workspace that directory
    holds what commands wrote, so a planted ``gettext.py`` would run inside K1412 itself, unsandboxed, with the
    provider key in its environment. While ``runpy`` imports this package for ``-m`` (``sys.argv[0]`` is still
    ``"-m"``), before any other K1412 module loads, the working directory leaves ``sys.path`` unless K1412 was
    loaded from it (a checkout of K1412 itself). Embedders importing K1412 keep their ``sys.path``. What this
    cannot cover is a planted ``k1412_ls`` package (it loads instead of this one): start K1412 with ``-P`` /
    ``PYTHONSAFEPATH=1`` or through the ``k1412`` script, as the editor integrations do."""
    if _sys.argv[:1] != ["-m"] or _sys.flags.safe_path:
        return
    try:
        cwd = _os.path.realpath(_os.getcwd())
    except OSError:
        cwd = ""
    ours = _os.path.realpath(_os.path.dirname(_os.path.dirname(_os.path.abspath(__file__))))
    if cwd == ours:
        return
    _sys.path[:] = [p for p in _sys.path if p and _os.path.realpath(p) != cwd]


_drop_working_directory()
