"""Warming the run machinery once the editor is idle, so the first task starts as fast as later ones.

Start-up stays lean: the runtime, the tool catalogue, pydantic and the openai SDK are not
imported before ``initialized``. Once the client has sent nothing for :data:`IDLE_S` seconds
(and at least :data:`DELAY_S` after ``initialized``), a worker thread imports them and the run
service builds the runtime (once per server; the workspace is a per-run argument) and one model
client, which it closes again; the sandbox is probed (bubblewrap runs twice, once). A failure here (no configuration, a missing key) is left for the
first run to report; the warm-up only logs it.
"""

from __future__ import annotations

import asyncio
import importlib
import logging
import time
from typing import Any

log = logging.getLogger("k1412.lsp")

DELAY_S = 0.5  # after `initialized`: let the editor's own start-up requests come first
IDLE_S = 0.5  # no client message for this long counts as idle
GIVE_UP_S = 120.0  # a client that never goes idle gets no warm-up; the first run pays instead

# What the first `k1412.runTask` / `k1412.delegate` imports (lsp/server.py imports them lazily).
MODULES = (
    "k1412_ls.lsp.command_args",
    "k1412_ls.lsp.runs",
    "k1412_ls.lsp.editor_store",
    "k1412_ls.lsp.reporting",
    "k1412_ls.lsp.approvals",
    "k1412_ls.core.runtime",
    "k1412_ls.core.render",
    "k1412_ls.catalog",
    "k1412_ls.models",
    "k1412_ls.state.store",
)


def import_machinery() -> None:
    for name in MODULES:
        importlib.import_module(name)


def probe_sandbox() -> None:
    """Find and probe bubblewrap (each probe is cached per process; the first run would pay for it)."""
    from k1412_ls.tools.bubblewrap import bubblewrap, network_namespace_problem

    if bubblewrap().path is not None:
        network_namespace_problem()


async def wait_until_idle(last_received: Any, busy: Any) -> bool:
    """Wait for a quiet client: ``last_received()`` monotonic time, ``busy()`` requests in flight."""
    await asyncio.sleep(DELAY_S)
    deadline = time.monotonic() + GIVE_UP_S
    while time.monotonic() < deadline:
        quiet = time.monotonic() - last_received()
        if quiet >= IDLE_S and not busy():
            return True
        await asyncio.sleep(max(0.05, IDLE_S - quiet))
    return False


async def warm_up(server: Any) -> None:
    """Import the run machinery off the loop, then build the runtime and a model client."""
    from k1412_ls.lsp.heap import trim_heap
    from k1412_ls.lsp.pygls_private import requests_in_flight

    protocol = server.protocol
    if not await wait_until_idle(lambda: protocol.last_received, lambda: requests_in_flight(protocol) > 0):
        log.info("the client never went idle; the run machinery loads with the first run")
        return
    began = time.perf_counter()
    loop = asyncio.get_running_loop()
    try:
        await loop.run_in_executor(None, import_machinery)
        runs = server.runs
        runtime = await runs.runtime()
        _, model = await loop.run_in_executor(None, runtime.resolve_model, runs.settings.model)
        close = getattr(model, "aclose", None)
        if close is not None:
            await close()
        await loop.run_in_executor(None, probe_sandbox)
        await loop.run_in_executor(None, trim_heap)  # what the imports freed goes back to the system
    except Exception as exc:  # the first run reports the problem in its own words
        log.info("warm-up stopped early (%s); the first run finishes the work", type(exc).__name__)
        return
    log.info("run machinery ready in %.0f ms", (time.perf_counter() - began) * 1000)


def start_warm_up(server: Any) -> asyncio.Task[None]:
    """Schedule :func:`warm_up` on the running loop (call from the ``initialized`` handler)."""
    task = asyncio.get_running_loop().create_task(warm_up(server))
    server.warm_up_task = task  # keep a reference: the loop holds tasks only weakly
    return task
