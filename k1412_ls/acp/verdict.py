"""The verdict of one run as ACP carries it: ``stopReason``, ``_meta.k1412.verdict`` and one line of text.

``stopReason`` stays what the protocol means (why the turn ended); whether the work is *proven* is
K1412's extension, documented in docs/acp.md as a proposal other agents could adopt.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from k1412_ls.core.cost import Cost, describe_cost

if TYPE_CHECKING:
    from k1412_ls.core.run_outcomes import RunResult

VERDICT_VERSION = 1
MARK_MET = "✓"
MARK_OPEN = "✗"


def contract_items(evidence: dict[str, Any]) -> list[dict[str, Any]]:
    """The run's contract ("done when") as ``{item, met}``: each item marked ✓ (proven) or ✗ (open)."""
    items = []
    for text in evidence.get("contract") or []:
        text = str(text)
        met = text.startswith(MARK_MET)
        body = text[1:].strip() if text[:1] in (MARK_MET, MARK_OPEN) else text
        items.append({"item": body, "met": met, "mark": MARK_MET if met else MARK_OPEN})
    return items


def stop_reason(result: RunResult, ended_by: str | None) -> str:
    """The protocol-true reason the turn ended: ``cancelled``, ``max_turn_requests``, ``max_tokens`` or ``end_turn``.

    ``ended_by`` is what closed an unverified run early: ``iterations`` (the model's iteration limit) or
    ``max_tokens`` (the token budget); anything else, and every completed or failed run, is ``end_turn``.
    """
    if result.status == "cancelled":
        return "cancelled"
    if result.status == "unverified" and ended_by == "iterations":
        return "max_turn_requests"
    if result.status == "unverified" and ended_by == "max_tokens":
        return "max_tokens"
    return "end_turn"


def verdict(result: RunResult) -> dict[str, Any]:
    """``_meta.k1412.verdict`` of a prompt response."""
    evidence = result.evidence or {}
    return {
        "version": VERDICT_VERSION,
        "status": result.status,
        "proven": result.status == "completed",
        "contract": contract_items(evidence),
        "required": list(evidence.get("required") or []),
        "satisfied": list(evidence.get("satisfied") or []),
        "missing": list(evidence.get("missing") or []),
        "run_id": result.run_id,
        "cost": dict(result.cost),
        "usage": dict(result.usage),
        "files_changed": list(result.files_changed),
        "iterations": result.iterations,
        "events_path": result.events_path,
    }


def verdict_line(result: RunResult) -> str:
    """The verdict in one line, for clients that ignore ``_meta``."""
    evidence = result.evidence or {}
    items = contract_items(evidence)
    met = sum(1 for item in items if item["met"])
    if result.status == "completed":
        detail = f"proven: {met}/{len(items)} contract items" if items else "proven by this run's tool results"
    elif result.status == "unverified":
        missing = [str(m) for m in evidence.get("missing") or []]
        detail = "not proven; missing: " + "; ".join(missing[:3]) if missing else "not proven"
    elif result.status == "cancelled":
        detail = "cancelled; the run and every process it started were stopped"
    else:
        reason = " ".join((result.message or "").split())
        detail = "failed: " + (reason[:200] if reason else "see the run log")
    cost = describe_cost(Cost.from_dict(result.cost))
    return f"K1412 verdict: {result.status} — {detail} · {result.run_id} · cost {cost}"


def prompt_usage(result: RunResult) -> dict[str, int]:
    """The prompt response's ``usage`` (ACP names) from the run's token counts, sub-agents included."""
    usage = result.usage or {}
    prompt = int(usage.get("prompt_tokens", 0))
    completion = int(usage.get("completion_tokens", 0))
    return {"totalTokens": prompt + completion, "inputTokens": prompt, "outputTokens": completion,
            "thoughtTokens": int(usage.get("reasoning_tokens", 0)),
            "cachedReadTokens": int(usage.get("cached_tokens", 0))}
