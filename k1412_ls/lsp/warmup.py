"""Warming the run machinery before the user's first task, so it starts as fast as later ones.

Start-up stays lean: the runtime, the tool catalogue, pydantic and the openai SDK are not
imported before ``initialized``, and by default not while the editor is idle either (they hold
~40 MiB). They load when the editor shows the task prompt: the VS Code extension and the
Neovim plugin send ``k1412.prepare`` as the prompt opens, and the user's typing covers the
warm-up (:func:`prepare`). With the setting ``k1412.warmUpAtStart`` (for clients that never send
``k1412.prepare``) they load instead once the client has sent nothing for :data:`IDLE_S`
seconds (and at least :data:`DELAY_S` after ``initialized``). Either way a worker thread imports
them and the run service builds the runtime (once per server; the workspace is a per-run
argument) and one model client, which it closes again; the sandbox is probed (bubblewrap runs
twice, once). A failure here (no configuration, a missing key) is left for the first run to
report; the warm-up only logs it, and the next ``k1412.prepare`` tries again. One warm-up at a
time, done once per server (:class:`WarmUp`).
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
    from k1412_ls.tools.sandbox.bubblewrap import bubblewrap, network_namespace_problem

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


class WarmUp:
    """The warm-up of one server's run machinery: at most one under way, done once.

    ``at_start`` is called from the ``initialized`` handler, ``prepare`` answers ``k1412.prepare``;
    both run on the event loop thread.
    """

    def __init__(self, server: Any) -> None:  # the K1412LanguageServer (lsp/server.py imports this module)
        self._server = server
        self.ready = False  # the machinery is loaded and the runtime built
        self._task: asyncio.Task[None] | None = None
        self._loading = False  # past any wait for an idle client: importing and building
        self._trim: asyncio.Task[None] | None = None

    def at_start(self) -> asyncio.Task[None]:
        """Warm up once the client is idle (``warmUpAtStart``); otherwise only trim the heap and wait."""
        if self._server.settings.warm_up_at_start:
            return self._schedule(when_idle=True)
        log.info("the run machinery loads when the editor opens the task prompt (k1412.prepare) or with "
                 "the first run")
        self._trim = asyncio.get_running_loop().create_task(_trim_idle_heap())
        return self._trim  # keep a reference: the loop holds tasks only weakly

    def prepare(self) -> dict[str, bool]:
        """``k1412.prepare``: warm up now unless done or under way.

        Returns ``ready`` (already warm: nothing to do) and ``warming`` (a warm-up is under way). A
        warm-up that failed (no configuration yet, say) is tried again; one still waiting for an idle
        client (``warmUpAtStart``) starts at once instead.
        """
        if self.ready:
            return {"ready": True, "warming": False}
        task = self._task
        if task is not None and not task.done() and not self._loading:
            task.cancel()  # it only waits for the client to go quiet; the user is at the prompt now
            task = None
        if task is None or task.done():
            self._schedule(when_idle=False)
        return {"ready": False, "warming": True}

    def _schedule(self, *, when_idle: bool) -> asyncio.Task[None]:
        self._task = asyncio.get_running_loop().create_task(self._warm(when_idle=when_idle))
        return self._task  # kept on self: the loop holds tasks only weakly

    async def _warm(self, *, when_idle: bool) -> None:
        """Import the run machinery off the loop, then build the runtime and a model client.

        ``when_idle``: first wait until the client is quiet (the start-up warm-up); ``k1412.prepare``
        starts at once (the user is typing a task).
        """
        from k1412_ls.lsp.heap import trim_heap
        from k1412_ls.lsp.pygls_private import requests_in_flight

        protocol = self._server.protocol
        if when_idle and not await wait_until_idle(lambda: protocol.last_received,
                                                   lambda: requests_in_flight(protocol) > 0):
            log.info("the client never went idle; the run machinery loads with the first run")
            return
        self._loading = True
        began = time.perf_counter()
        loop = asyncio.get_running_loop()
        try:
            await loop.run_in_executor(None, import_machinery)
            runs = self._server.runs
            runtime = await runs.runtime()
            _, model = await loop.run_in_executor(None, runtime.resolve_model, runs.settings.model)
            close = getattr(model, "aclose", None)
            if close is not None:
                await close()
            await loop.run_in_executor(None, probe_sandbox)
            await loop.run_in_executor(None, trim_heap)  # what the imports freed goes back to the system
        except Exception as exc:  # the first run reports the problem in its own words
            log.info("warm-up stopped early (%s); the next k1412.prepare or the first run tries again",
                     type(exc).__name__)
            return
        finally:
            self._loading = False
        self.ready = True
        log.info("run machinery ready in %.0f ms", (time.perf_counter() - began) * 1000)


async def _trim_idle_heap() -> None:
    from k1412_ls.lsp.heap import trim_heap

    await asyncio.get_running_loop().run_in_executor(None, trim_heap)  # what start-up freed goes back
