"""One evaluation run, as a self-contained job a pool process or a Ray worker executes.

A :class:`RunJob` carries everything the run needs (the task, the arm's full
configuration, the fixture workspace as a tar archive), so the worker needs
nothing from the caller's disk. It runs in a fresh workspace and state dir,
runs the task's check in that workspace, and returns the result and the
run's event log as text; the caller files the log in its own state dir.
"""

from __future__ import annotations

import asyncio
import atexit
import io
import os
import shutil
import subprocess
import tarfile
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

CHECK_OUTPUT = 2000


@dataclass(frozen=True)
class RunJob:
    """One run of one task by one arm (picklable)."""

    experiment: str
    arm: str
    task_id: str
    repeat: int
    task: str
    model: str
    config: dict[str, Any]
    config_source: str
    workspace_tar: bytes | None = None
    check: str | None = None
    check_timeout_s: float = 120.0
    user: str = "eval"


@dataclass
class JobOutcome:
    """What came back from a job: the result object's essentials, the check, and the event log."""

    experiment: str
    arm: str
    task_id: str
    repeat: int
    run_id: str | None
    status: str
    message: str
    iterations: int = 0
    usage: dict[str, int] = field(default_factory=dict)
    cost: dict[str, Any] = field(default_factory=lambda: {"amount": 0.0, "currency": "USD", "priced": False})
    latency_s: float = 0.0
    check_passed: bool | None = None
    check_exit: int | None = None
    check_output: str = ""
    events: str = ""
    worker: str = ""

    def row(self) -> dict[str, Any]:
        """The outcome without its event log (``k1412 eval --json``'s ``runs``)."""
        return {k: v for k, v in self.__dict__.items() if k != "events"}


def pack_workspace(directory: Path | None) -> bytes | None:
    """The fixture directory as an uncompressed tar archive (None: start from an empty workspace)."""
    if directory is None:
        return None
    buffer = io.BytesIO()
    with tarfile.open(fileobj=buffer, mode="w") as archive:
        archive.add(directory, arcname=".")
    return buffer.getvalue()


def _unpack(data: bytes | None, target: Path) -> None:
    target.mkdir(parents=True, exist_ok=True)
    if data:
        with tarfile.open(fileobj=io.BytesIO(data), mode="r") as archive:
            archive.extractall(target, filter="data")


_STATE: Path | None = None


def _worker_state_dir() -> Path:
    """One state dir per worker process (its sandbox hides it from commands), removed at exit."""
    global _STATE
    if _STATE is None:
        _STATE = Path(tempfile.mkdtemp(prefix="k1412-eval-state-"))
        atexit.register(shutil.rmtree, _STATE, True)
    return _STATE


def run_check(command: str, workspace: Path, timeout_s: float) -> tuple[bool, int | None, str]:
    """Run the task's check in the run's workspace: passed, exit code, the tail of its output."""
    try:
        proc = subprocess.run(["bash", "-c", command], cwd=workspace, capture_output=True, text=True,
                              timeout=timeout_s, stdin=subprocess.DEVNULL, errors="replace")
    except subprocess.TimeoutExpired:
        return False, None, f"the check timed out after {timeout_s:g} s"
    output = (proc.stdout + proc.stderr)[-CHECK_OUTPUT:]
    return proc.returncode == 0, proc.returncode, output


def execute_job(job: RunJob) -> JobOutcome:
    """Run one job to its end; never raises (an internal error is a ``failed`` outcome)."""
    outcome = JobOutcome(job.experiment, job.arm, job.task_id, job.repeat, None, "failed", "",
                         worker=f"{os.uname().nodename}:{os.getpid()}")
    state = _worker_state_dir()
    with tempfile.TemporaryDirectory(prefix="k1412-eval-ws-") as tmp:
        workspace = Path(tmp) / "ws"
        runtime = None
        try:
            from k1412_ls.assembly import build_runtime
            from k1412_ls.config import build_config
            from k1412_ls.core.run_request import RunRequest

            _unpack(job.workspace_tar, workspace)
            config = build_config(job.config, job.config_source)
            runtime = build_runtime(config, home=state, state_store=False)  # each run starts with no memories
            request = RunRequest(task=job.task, workspace=workspace, model=job.model, user=job.user,
                                 meta={"experiment": job.experiment, "arm": job.arm})
            started = time.monotonic()
            result = asyncio.run(runtime.run(request))
            outcome.latency_s = round(time.monotonic() - started, 3)
            outcome.run_id, outcome.status, outcome.message = result.run_id, result.status, result.message[:2000]
            outcome.iterations, outcome.usage, outcome.cost = result.iterations, result.usage, result.cost
            log = Path(result.events_path)
            outcome.events = log.read_text(encoding="utf-8")
            log.unlink(missing_ok=True)
        except Exception as exc:  # one broken run must not end the evaluation
            outcome.message = f"the run could not be executed: {type(exc).__name__}: {exc}"[:2000]
        finally:
            if runtime is not None:
                runtime.executor.shutdown(wait=False, cancel_futures=True)
        if job.check and outcome.run_id is not None:
            outcome.check_passed, outcome.check_exit, outcome.check_output = run_check(
                job.check, workspace, job.check_timeout_s)
    return outcome


__all__ = ["JobOutcome", "RunJob", "execute_job", "pack_workspace", "run_check"]
