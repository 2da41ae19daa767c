"""Short human descriptions of events, shared by the terminal and editor progress."""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from k1412_ls.core.cost import Cost, budget_sentence, describe_cost

if TYPE_CHECKING:
    from k1412_ls.core.events import Event

_STATUS_MARK = {"completed": "✓ completed", "unverified": "⚠ unverified", "failed": "✗ failed",
                "cancelled": "■ cancelled"}


def _arg_hint(args: Mapping[str, Any]) -> str:
    for key in ("path", "command", "query", "process_id", "role", "memory_id"):
        value = args.get(key)
        if isinstance(value, str) and value:
            text = value.replace("\n", " ")
            return text if len(text) <= 60 else text[:57] + "…"
    return ""


def describe_verification(state: Mapping[str, Any] | None) -> str:
    """``evidence 1/2 · missing: …`` from a required/satisfied/missing state."""
    if not state:
        return ""
    required = list(state.get("required") or [])
    satisfied = list(state.get("satisfied") or [])
    missing = list(state.get("missing") or [])
    if not required:
        return "evidence: none required"
    text = f"evidence {len(satisfied)}/{len(required)}"
    if missing:
        text += " · missing: " + "; ".join(missing)
    return text


def _spent(run: Any) -> str:
    """`` · 1,234 tokens, $0.0031`` from a ``{"tokens", "cost"}`` snapshot (empty without one)."""
    if not isinstance(run, dict) or not isinstance(run.get("tokens"), int):
        return ""
    return f" · {run['tokens']:,} tokens, {describe_cost(Cost.from_dict(run.get('cost')))}"


def describe_event(event: Event) -> str | None:
    """One line for an event, or None when it is not worth showing."""
    p = event.payload
    indent = "  " * event.depth
    kind = event.type
    if kind == "run.created":
        line = f"{indent}▶ {p.get('task', '')!s:.80} · model {p.get('model')}"
        contract = [str(c) for c in p.get("contract") or []]
        if contract:
            line += f"\n{indent}  done when: " + "; ".join(contract)
        return line
    if kind == "context.built":
        dropped = f", {p.get('dropped')} older dropped" if p.get("dropped") else ""
        return f"{indent}context: {p.get('messages')} messages{dropped}, {len(p.get('tools') or [])} tools"
    if kind == "context.compacted":
        folded = f", {p.get('steps_folded')} steps folded" if p.get("steps_folded") else ""
        return (f"{indent}context compacted: {p.get('before_chars')} → {p.get('after_chars')} of "
                f"{p.get('budget_chars')} chars, {p.get('results_elided')} results elided{folded}")
    if kind == "context.overflowed":
        window = f"; window {p.get('window_tokens')} tokens" if p.get("window_tokens") else ""
        return (f"{indent}provider refused {p.get('sent_chars')} chars as too long{window}; "
                f"budget now {p.get('budget_chars')} chars")
    if kind == "model.responded":
        if not p.get("ok", True):
            return f"{indent}model error: {p.get('error')}"
        calls = [c.get("name") for c in p.get("tool_calls") or []]
        line = f"{indent}model → {', '.join(calls)}" if calls else f"{indent}model answered"
        return line + _spent(p.get("run"))
    if kind == "budget.exhausted":
        return f"{indent}■ budget reached: {budget_sentence(p)}" if p.get("budget") else None
    if kind == "tool.completed":
        mark = "✓" if p.get("ok") else "✗"
        hint = _arg_hint(p.get("args") or {})
        line = f"{indent}{mark} {p.get('tool')} {hint}".rstrip()
        facts = p.get("facts") or {}
        if facts.get("kind") == "exec" and facts.get("exit_code") is not None:
            line += f" (exit {facts['exit_code']})"
        if facts.get("unchanged"):
            line += " (unchanged)"
        if not p.get("ok") and p.get("error"):
            line += f": {p['error']}"
        return line
    if kind == "run.undone":
        refused = f", {len(p.get('refused') or [])} refused" if p.get("refused") else ""
        return f"{indent}↶ undone: {len(p.get('restored') or [])} restored{refused} ({p.get('by')})"
    if kind == "tool.batch_limited":
        return f"{indent}batch limited: {p.get('requested')} calls requested, {p.get('executed')} run"
    if kind == "completion.rejected":
        return f"{indent}⚠ completion rejected · {describe_verification(p)}"
    if kind == "completion.unverified":
        return f"{indent}⚠ unverified ({p.get('reason')}) · {describe_verification(p)}"
    if kind == "agent.spawned":
        return f"{indent}↳ sub-agent {p.get('agent_id')} ({p.get('role')}{', write' if p.get('write') else ''})"
    if kind == "agent.completed":
        return f"{indent}↲ sub-agent {p.get('agent_id')} {p.get('status')}"
    if kind.startswith("run.") and kind != "run.created":
        status = str(p.get("status", kind.split(".", 1)[1]))
        spent = ""
        if isinstance(p.get("usage"), dict) and isinstance(p.get("cost"), dict):
            usage = p["usage"]
            spent = _spent({"tokens": int(usage.get("prompt_tokens") or 0) + int(usage.get("completion_tokens") or 0),
                            "cost": p["cost"]})
        return f"{_STATUS_MARK.get(status, status)} · {describe_verification(p.get('evidence'))}{spent}"
    return None
