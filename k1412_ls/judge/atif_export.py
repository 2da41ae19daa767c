"""``k1412 replay --export atif RUN``: a K1412 event log as an ATIF trajectory (JSON).

ATIF (Agent Trajectory Interchange Format, ``schema_version`` "ATIF-v1.2") is what trajectory tools
read: ``steps`` with ``source`` user/agent, ``message``, ``tool_calls`` (``tool_call_id``,
``function_name``, ``arguments``) and ``observation.results`` (``source_call_id``, ``content``). The
task is the user step; each model reply is an agent step holding the calls it made and their
results. A failed command's result starts ``Exit code N`` (the convention ATIF readers, ``k1412 judge``
among them, take the status from). Each result keeps K1412's own record under ``extra.k1412``
(``ok`` and the ``facts`` the gate read), so nothing the verdict rests on is lost.
"""

from __future__ import annotations

import json
from typing import Any

from k1412_ls import __version__
from k1412_ls.core.events import Event

SCHEMA = "ATIF-v1.2"


def _result_text(payload: dict[str, Any]) -> str:
    facts = payload.get("facts") if isinstance(payload.get("facts"), dict) else {}
    if facts.get("kind") == "exec":
        output = str(facts.get("output") or "")
        code = facts.get("exit_code")
        if code is None:
            return "Exit code -1\nThe command was stopped before it exited.\n" + output
        return output if code == 0 else f"Exit code {code}\n{output}"
    if not payload.get("ok", True):
        return str(payload.get("error") or "the call failed")
    return json.dumps({k: v for k, v in facts.items() if k in ("kind", "paths", "writes", "op")}, ensure_ascii=False)


def to_atif(events: list[Event]) -> dict[str, Any]:
    """The ATIF trajectory of one run's events (see the module docstring)."""
    ordered = sorted(events, key=lambda e: e.seq)
    steps: list[dict[str, Any]] = []
    by_call: dict[str, dict[str, Any]] = {}
    model = ""
    final: dict[str, Any] = {}

    def add(step: dict[str, Any]) -> dict[str, Any]:
        step["step_id"] = len(steps) + 1
        steps.append(step)
        return step

    for event in ordered:
        payload = event.payload
        if event.type == "run.created" and event.depth == 0:
            model = str(payload.get("model") or "")
            add({"timestamp": event.ts, "source": "user", "message": str(payload.get("task") or "")})
        elif event.type == "model.responded" and payload.get("ok", True):
            add({"timestamp": event.ts, "source": "agent", "model_name": model,
                 "message": str(payload.get("content") or ""), "extra": {"depth": event.depth}})
        elif event.type == "tool.started":
            host = steps[-1] if steps and steps[-1]["source"] == "agent" else add(
                {"timestamp": event.ts, "source": "agent", "model_name": model, "message": "",
                 "extra": {"depth": event.depth}})
            call = {"tool_call_id": str(payload.get("call_id")), "function_name": str(payload.get("tool")),
                    "arguments": payload.get("args") if isinstance(payload.get("args"), dict) else {}}
            host.setdefault("tool_calls", []).append(call)
            by_call[call["tool_call_id"]] = host
        elif event.type == "tool.completed":
            call_id = str(payload.get("call_id"))
            host = by_call.get(call_id)
            if host is None:
                continue  # a call refused before it started: no tool call to attach it to
            host.setdefault("observation", {"results": []})["results"].append({
                "source_call_id": call_id, "content": _result_text(payload),
                "extra": {"k1412": {"ok": payload.get("ok"), "facts": payload.get("facts")}}})
        elif event.type in ("run.completed", "run.unverified", "run.failed", "run.cancelled") and event.depth == 0:
            final = {"status": payload.get("status"), "evidence": payload.get("evidence"),
                     "usage": payload.get("usage"), "cost": payload.get("cost")}
    run_id = ordered[0].run_id if ordered else ""
    return {"schema_version": SCHEMA, "session_id": run_id,
            "agent": {"name": "k1412", "version": __version__, "model_name": model},
            "steps": steps, "final_metrics": {"extra": {"k1412": final}}}
