"""Runs one of the user's hook commands: JSON on stdin, exit code and output back, killed at its timeout.

Hooks are the user's own commands from the user's configuration (never a workspace file), run like
Claude Code runs its command hooks: ``bash -c COMMAND`` in the workspace, outside the model's sandbox,
with the user's environment plus ``K1412_PROJECT_DIR`` and ``CLAUDE_PROJECT_DIR`` naming the workspace.
Each hook gets its own process group, so a hook that hangs (or leaves a child holding its output open)
is killed with everything in that group once its timeout passes. What it decides is read by :mod:`k1412_ls.core.hooks`.
"""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess
import time
from dataclasses import dataclass
from pathlib import Path

MAX_OUTPUT_BYTES = 64 * 1024
KILL_WAIT_S = 5.0


@dataclass(frozen=True)
class HookProcessResult:
    """How one hook process ended."""

    exit_code: int | None  # None: killed at its timeout, or it could not start
    stdout: str
    stderr: str
    timed_out: bool
    ms: float
    error: str = ""  # why it could not start


def _kill_group(proc: subprocess.Popen[bytes]) -> None:
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(proc.pid, signal.SIGKILL)
    with contextlib.suppress(subprocess.TimeoutExpired):
        proc.wait(KILL_WAIT_S)


def _text(data: bytes | None) -> str:
    return (data or b"")[:MAX_OUTPUT_BYTES].decode("utf-8", errors="replace")


def run_hook_process(command: str, stdin: bytes, cwd: Path, timeout_s: float) -> HookProcessResult:
    """Run ``command`` with ``stdin``; kill its whole process group when ``timeout_s`` passes."""
    env = {**os.environ, "K1412_PROJECT_DIR": str(cwd), "CLAUDE_PROJECT_DIR": str(cwd)}
    begin = time.monotonic()
    try:
        proc = subprocess.Popen(["bash", "-c", command], cwd=cwd, env=env, stdin=subprocess.PIPE,
                                stdout=subprocess.PIPE, stderr=subprocess.PIPE, start_new_session=True)
    except OSError as exc:
        return HookProcessResult(None, "", "", False, 0.0, f"could not start: {exc.strerror or exc}")
    try:
        out, err = proc.communicate(stdin, timeout=timeout_s)
    except subprocess.TimeoutExpired:
        _kill_group(proc)
        with contextlib.suppress(Exception):
            proc.communicate(timeout=KILL_WAIT_S)  # close the pipes
        return HookProcessResult(None, "", "", True, round((time.monotonic() - begin) * 1000, 1))
    return HookProcessResult(proc.returncode, _text(out), _text(err), False, round((time.monotonic() - begin) * 1000, 1))


__all__ = ["HookProcessResult", "run_hook_process"]
