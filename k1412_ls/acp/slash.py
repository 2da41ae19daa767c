"""K1412's slash commands in an ACP session (``available_commands_update``): ``/undo`` and ``/replay``.

``/undo [RUN_ID]`` restores, on disk, every path the run changed (default: the latest run in this
workspace with something left to undo), the same plan and refusals as ``k1412 undo``. ``/replay
[RUN_ID]`` re-judges a run of this session from its event log, as ``k1412 replay`` does. Each answers
with message chunks and ``_meta.k1412`` holding the result object; no model is asked.
"""

from __future__ import annotations

import asyncio
import re
from typing import TYPE_CHECKING, Any

from acp.helpers import update_agent_message_text
from acp.schema import PromptResponse

from k1412_ls.locations import ConfigError, state_dir

if TYPE_CHECKING:
    from k1412_ls.acp.sessions import Session
    from k1412_ls.state.store import StateStore

RUN_ID = re.compile(r"run-[0-9a-f]{16}")


async def run_slash_command(conn: Any, store: StateStore, user: str, session: Session, name: str,
                            run_id: str | None) -> PromptResponse:
    if run_id is not None and not RUN_ID.fullmatch(run_id):
        return await _say(conn, session, f"/{name} takes a run id (run- and 16 hex digits), not {run_id!r}.",
                          {"ok": False})
    loop = asyncio.get_running_loop()
    if name == "undo":
        result = await loop.run_in_executor(None, _undo, session, run_id)
        lines = [result["message"]]
        lines += [f"restored {path}" for path in result.get("restored", [])]
        lines += [f"refused {r['path']}: {r['reason']}" for r in result.get("refused", [])]
        return await _say(conn, session, "\n".join(lines), {"undo": result})
    if run_id is None:
        run_id = session.last_run_id or await loop.run_in_executor(None, _last_run, store, user, session)
    if run_id is None:
        return await _say(conn, session, "This session has no run to replay yet.", {"ok": False})
    report = await loop.run_in_executor(None, _replay, run_id)
    return await _say(conn, session, report["line"], {"replay": report})


def _undo(session: Session, run_id: str | None) -> dict[str, Any]:
    from k1412_ls.core.undo_result import UnknownRun, undo_on_disk
    from k1412_ls.tools.undo.undo_on_disk import latest_run

    state = state_dir()
    run_id = run_id or latest_run(state, session.cwd)
    if run_id is None:
        return {"ok": False, "run_id": "", "restored": [], "refused": [],
                "message": "No K1412 run in this workspace has anything left to undo."}
    try:
        return undo_on_disk(state, run_id, workspace=session.cwd, by="editor")
    except UnknownRun as exc:
        return {"ok": False, "run_id": run_id, "restored": [], "refused": [], "message": str(exc)}


def _last_run(store: StateStore, user: str, session: Session) -> str | None:
    for row in store.conversations(user):
        if row["conversation"] == session.session_id:
            return row["last_run_id"]
    return None


def _replay(run_id: str) -> dict[str, Any]:
    from k1412_ls.core.render import describe_verification
    from k1412_ls.core.replay_view import load_run_log, replay_report

    try:
        report = replay_report(load_run_log(run_id, state_dir()))
    except ConfigError as exc:
        return {"run_id": run_id, "line": str(exc), "ok": False}
    line = (f"{run_id}: recorded verdict {report.recorded}; re-checked verdict {report.recomputed} · "
            f"{describe_verification(report.evidence)}")
    if report.agrees is False:
        line += "\nwarning: the re-checked verdict disagrees with the recorded one."
    return {"run_id": run_id, "ok": True, "recorded": report.recorded, "recomputed": report.recomputed,
            "agrees": report.agrees, "evidence": report.evidence, "line": line}


async def _say(conn: Any, session: Session, text: str, meta: dict[str, Any]) -> PromptResponse:
    await conn.session_update(session_id=session.session_id, update=update_agent_message_text(text))
    return PromptResponse(stop_reason="end_turn", field_meta={"k1412": meta})
