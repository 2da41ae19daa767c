"""End to end: $/cancelRequest, the progress cancel button and k1412.cancelRun each stop a run."""

from __future__ import annotations

import asyncio
import os
import random
from pathlib import Path

import pytest
from lsprotocol import types
from pygls.exceptions import JsonRpcRequestCancelled

from k1412_ls.lsp import constants as c
from tests.support.lsp_client import CLIENT_NAMES, Session, lsp_session, wait_until

pytestmark = pytest.mark.e2e


def processes_with_arg(arg: str) -> list[int]:
    """Live (non-zombie) processes whose command line contains ``arg`` exactly."""
    found = []
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            cmdline = Path(f"/proc/{entry}/cmdline").read_bytes().split(b"\0")
            state = Path(f"/proc/{entry}/stat").read_text().rsplit(")", 1)[1].split()[0]
        except OSError:
            continue
        if arg.encode() in cmdline and state not in ("Z", "X"):
            found.append(int(entry))
    return found


def _script(marker: str) -> list[dict[str, object]]:
    # A foreground sleep and a background grandchild: both must die with the run.
    command = f"sleep {marker} & sleep {marker}; wait"
    return [
        {"tool_calls": [{"name": "run_command", "arguments": {"command": command, "timeout_s": 300}}]},
        {"content": "finished"},
    ]


async def _start(session: Session, marker: str, msg_id: str) -> asyncio.Future[object]:
    _, pending = session.send_command(c.CMD_RUN_TASK, {"task": "Run the slow command."}, token=f"tok-{msg_id}",
                                      msg_id=msg_id)
    await wait_until(lambda: len(processes_with_arg(marker)) >= 2, timeout=20)
    return pending


@pytest.mark.parametrize("client", CLIENT_NAMES)
@pytest.mark.parametrize("how", ["cancelRequest", "progressCancel", "cancelRun"])
async def test_cancelling_a_run_answers_quickly_and_kills_its_processes(tmp_path: Path, client: str,
                                                                         how: str) -> None:
    marker = f"120.{random.randrange(10**6):06d}"
    async with lsp_session(tmp_path, _script(marker), client=client) as session:
        msg_id = f"run-{how}"
        pending = await _start(session, marker, msg_id)
        run_id = session.events[0].run_id
        if how == "cancelRequest":
            session.client.cancel_request(types.CancelParams(id=msg_id))
            with pytest.raises(JsonRpcRequestCancelled):
                await asyncio.wait_for(pending, 2.0)
        else:
            if how == "progressCancel":
                session.client.window_work_done_progress_cancel(types.WorkDoneProgressCancelParams(token=f"tok-{msg_id}"))
            else:
                answer = await session.command(c.CMD_CANCEL_RUN, {"runId": run_id}, timeout=2.0)
                assert answer == {"run_id": run_id, "cancelled": True}
            result = await asyncio.wait_for(pending, 2.0)
            assert result["status"] == "cancelled"
            assert result["run_id"] == run_id

        await wait_until(lambda: bool(session.events_of("run.cancelled")), timeout=5)
        assert processes_with_arg(marker) == []
        (cancelled,) = session.events_of("run.cancelled")
        assert cancelled.run_id == run_id
        # The end notification may trail the cancelled reply (they travel separately).
        await wait_until(lambda: isinstance(session.client.progress_reports[f"tok-{msg_id}"][-1],
                                            types.WorkDoneProgressEnd), timeout=5)
        end = session.client.progress_reports[f"tok-{msg_id}"][-1]
        assert isinstance(end, types.WorkDoneProgressEnd) and end.message.startswith("cancelled")
        # The server is still responsive afterwards.
        assert await session.command(c.CMD_LIST_MODELS, {}, timeout=5)
