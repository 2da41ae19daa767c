"""Undo a whole run: the result object both adapters return, and the ``run.undone`` event.

The CLI restores on disk (:func:`undo_on_disk`); the language server first sends the editor one
inverse ``workspace/applyEdit`` and then restores the disk the same way (``k1412_ls/lsp/undo_run.py``).
Both end in :func:`finish_undo`, which marks the restored paths in the run's manifest (a second
undo restores nothing and says so) and appends ``run.undone`` to the run's event log.
"""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any

from k1412_ls.core.events import Event, read_events, utc_timestamp
from k1412_ls.text.redact import Redactor
from k1412_ls.tools.undo.undo_on_disk import NOT_UNDOABLE, UndoPlan, UnknownRun, apply_on_disk, plan_undo
from k1412_ls.tools.undo.undo_store import manifest_path, write_json

EXIT_ALL_RESTORED = 0
EXIT_SOME_REFUSED = 1
EXIT_UNKNOWN_RUN = 2

__all__ = ["EXIT_UNKNOWN_RUN", "UnknownRun", "exit_code", "finish_undo", "plan_undo", "undo_on_disk"]


def undo_on_disk(state: Path, run_id: str, *, workspace: Path | None = None, by: str = "cli") -> dict[str, Any]:
    """Plan and restore ``run_id`` on disk; UnknownRun when there is no such run."""
    plan = plan_undo(state, run_id, workspace=workspace)
    restored, refused = apply_on_disk(plan) if plan.blocked is None else ([], [])
    return finish_undo(state, plan, restored, refused, by=by)


def finish_undo(state: Path, plan: UndoPlan, restored: list[str], refused: list[dict[str, str]], *,
                by: str, message: str | None = None) -> dict[str, Any]:
    """The result object; records what was restored in the manifest and the run's log."""
    back = sorted({*restored, *plan.unchanged}) if plan.blocked is None and message is None else []
    refusals = [*plan.refused, *refused]
    pending = bool(plan.actions or plan.refused or plan.unchanged)
    if plan.blocked is not None:
        text = plan.blocked
    elif message is not None:
        text = message
    elif not plan.manifest:
        text = plan.notes[0] if plan.notes else f"Run {plan.run_id} changed no files; there is nothing to undo."
    elif not pending:
        text = f"Run {plan.run_id} was already undone; nothing was restored."
    elif refusals:
        text = (f"Restored {len(back)} path(s) of run {plan.run_id}; refused {len(refusals)} that changed after "
                f"the run (they were left as they are).")
    else:
        text = f"Restored all {len(back)} path(s) that run {plan.run_id} changed."
    ok = plan.blocked is None and message is None and not refusals and (pending or not plan.manifest)
    notes = [*(plan.notes if plan.manifest else []), *NOT_UNDOABLE]
    result = {"ok": ok, "run_id": plan.run_id, "restored": back, "refused": refusals, "message": text,
              "not_undoable": notes}
    if back and plan.manifest:
        _mark_undone(state, plan, back)
    if plan.manifest and (back or refusals):
        _log_undone(state, plan.run_id, {"by": by, "restored": back, "refused": refusals, "message": text})
    return result


def exit_code(result: dict[str, Any]) -> int:
    return EXIT_ALL_RESTORED if result["ok"] else EXIT_SOME_REFUSED


def _mark_undone(state: Path, plan: UndoPlan, paths: list[str]) -> None:
    manifest = plan.manifest
    stamp = time.time()
    for rel in paths:
        entry = manifest["paths"].get(rel)
        if isinstance(entry, dict):
            entry["undone"] = stamp
    try:
        write_json(manifest_path(state, plan.run_id), manifest)
    except OSError:
        pass


def _log_undone(state: Path, run_id: str, payload: dict[str, Any]) -> None:
    """Append a catalogued ``run.undone`` to the run's log, numbered after its last event."""
    path = state / "runs" / f"{run_id}.jsonl"
    try:
        events = read_events(path)
    except (OSError, ValueError):
        return
    if not events:
        return
    last = events[-1]
    event = Event(run_id=run_id, seq=last.seq + 1, ts=utc_timestamp(), type="run.undone", user=last.user,
                  conversation=last.conversation, meta=dict(last.meta),
                  payload=Redactor.from_environment().value(payload))
    try:
        with path.open("a", encoding="utf-8") as fh:
            fh.write(event.to_json() + "\n")
    except OSError:
        pass
