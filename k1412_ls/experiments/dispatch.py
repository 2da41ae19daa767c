"""Where evaluation runs execute: a local process pool (default) or a Ray cluster (``--ray ADDRESS``).

Both take the same :class:`RunJob` list and yield :class:`JobOutcome` as runs
finish; each run has its own workspace copy and state dir on whichever
machine runs it, and its event log comes back in the outcome.
"""

from __future__ import annotations

import multiprocessing
import os
import socket
from collections.abc import Callable, Iterator
from concurrent.futures import FIRST_COMPLETED, Future, ProcessPoolExecutor, wait
from typing import Any

from k1412_ls.experiments.jobs import JobOutcome, RunJob, execute_job
from k1412_ls.locations import ConfigError


def failed_outcome(job: RunJob, message: str) -> JobOutcome:
    """The outcome of a run whose worker never reported back."""
    return JobOutcome(job.experiment, job.arm, job.task_id, job.repeat, None, "failed", message[:2000])


def default_workers() -> int:
    return max(1, min(4, os.cpu_count() or 1))


def run_local(jobs: list[RunJob], workers: int) -> Iterator[JobOutcome]:
    """Run the jobs in ``workers`` fresh processes (spawned: no state shared with this one)."""
    context = multiprocessing.get_context("spawn")
    with ProcessPoolExecutor(max_workers=workers, mp_context=context) as pool:
        submitted: dict[Future[JobOutcome], RunJob] = {pool.submit(execute_job, job): job for job in jobs}
        pending = set(submitted)
        while pending:
            done, pending = wait(pending, return_when=FIRST_COMPLETED)
            for future in done:
                try:
                    yield future.result()
                except Exception as exc:  # the worker process died (killed, out of memory)
                    yield failed_outcome(submitted[future], f"the worker process failed: {exc}")


def _ray_module() -> Any:
    try:
        import ray
    except ImportError:
        raise ConfigError("--ray needs the ray package on this machine and on the cluster: "
                          "pip install 'k1412-ls[ray]'.") from None
    return ray


def check_reachable(address: str, timeout_s: float = 5.0) -> None:
    """Fail in one sentence when nothing listens at a ``host:port`` address (Ray itself waits minutes)."""
    if address == "auto":
        return
    host, _, port = address.removeprefix("ray://").rpartition(":")
    if not host or not port.isdigit():
        raise ConfigError(f"--ray takes the head's address as HOST:PORT (e.g. 10.0.0.5:6379); got {address!r}.")
    try:
        socket.create_connection((host.strip("[]"), int(port)), timeout=timeout_s).close()
    except OSError as exc:
        raise ConfigError(f"Cannot reach the Ray cluster at {address}: {exc.strerror or exc}; start it with "
                          "'ray start --head' or check the address.") from None


def run_ray(jobs: list[RunJob], address: str, workers: int | None) -> Iterator[JobOutcome]:
    """Run each job as a Ray task on the cluster at ``address`` (at most ``workers`` at once when given)."""
    ray = _ray_module()
    check_reachable(address)
    try:
        ray.init(address=address, log_to_driver=False, logging_level="ERROR")
    except Exception as exc:
        raise ConfigError(f"Cannot connect to the Ray cluster at {address}: {str(exc).splitlines()[0]}") from None
    try:
        remote: Callable[..., Any] = ray.remote(num_cpus=1, max_retries=0)(execute_job).remote
        queue = list(jobs)
        limit = workers or len(queue)
        in_flight: dict[Any, RunJob] = {}
        while queue or in_flight:
            while queue and len(in_flight) < limit:
                job = queue.pop(0)
                in_flight[remote(job)] = job
            done, _ = ray.wait(list(in_flight), num_returns=1)
            for ref in done:
                job = in_flight.pop(ref)
                try:
                    yield ray.get(ref)
                except Exception as exc:  # the worker died (out of memory, node lost): that run failed
                    yield failed_outcome(job, f"the Ray task failed: {str(exc).splitlines()[0][:500]}")
    finally:
        ray.shutdown()


__all__ = ["default_workers", "run_local", "run_ray"]
