"""What a run costs, and the budgets that stop it: usage × the model's pricing, per call and per run.

A call's amount is ``(prompt - cached) × input + cached × cached_input + completion × output``,
prices per million tokens at the rates in force when the call was requested (reasoning tokens are part of ``completion``, as providers bill them). A
model without pricing is *unpriced*: its amount is 0 with ``priced: false``, never an estimate.
"""

from __future__ import annotations

import threading
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any

from k1412_ls.core.model_port import Usage
from k1412_ls.pricing import Pricing

CURRENCY = "USD"
# Sums of many small float products: round what is published so equal sums print equally.
_DIGITS = 10


@dataclass(frozen=True)
class Cost:
    """An amount of money, or the admission that it is unknown (``priced`` False)."""

    amount: float = 0.0
    priced: bool = True
    currency: str = CURRENCY

    def __add__(self, other: Cost) -> Cost:
        return Cost(self.amount + other.amount, self.priced and other.priced, self.currency)

    def as_dict(self) -> dict[str, Any]:
        return {"amount": round(self.amount, _DIGITS), "currency": self.currency, "priced": self.priced}

    @classmethod
    def from_dict(cls, data: Any) -> Cost:
        """A cost object read back from an event log (unpriced when absent or malformed)."""
        if not isinstance(data, dict) or not isinstance(data.get("amount"), int | float):
            return cls(0.0, False)
        return cls(float(data["amount"]), bool(data.get("priced")), str(data.get("currency") or CURRENCY))


UNPRICED = Cost(0.0, False)


def call_cost(usage: Usage, pricing: Pricing | None, at: datetime | None = None) -> Cost:
    """The cost of one model call requested at ``at`` (now by default: some providers bill by the hour)."""
    if pricing is None:
        return UNPRICED
    rates = pricing.rates_at(at or datetime.now(UTC))
    cached = min(usage.cached_tokens, usage.prompt_tokens)
    amount = ((usage.prompt_tokens - cached) * rates.input + cached * rates.cached
              + usage.completion_tokens * rates.output) / 1_000_000
    return Cost(amount, True, pricing.currency)


def describe_cost(cost: Cost) -> str:
    """``$0.0123`` (``unpriced`` when unknown)."""
    if not cost.priced:
        return "unpriced"
    return f"${cost.amount:.4f}" if cost.amount < 100 else f"${cost.amount:,.2f}"


@dataclass(frozen=True)
class Budget:
    """Per-run limits; None is no limit."""

    max_cost: float | None = None
    max_tokens: int | None = None

    def __bool__(self) -> bool:
        return self.max_cost is not None or self.max_tokens is not None

    def describe(self) -> str:
        """The ``meta.budget`` of runs under a budget: ``max_cost=0.05,max_tokens=100000``."""
        parts = []
        if self.max_cost is not None:
            parts.append(f"max_cost={self.max_cost:g}")
        if self.max_tokens is not None:
            parts.append(f"max_tokens={self.max_tokens}")
        return ",".join(parts)


@dataclass
class RunMeter:
    """Tokens and cost of one run, root agent and sub-agents together, against the run's budget."""

    pricing: Pricing | None
    budget: Budget = field(default_factory=Budget)
    usage: Usage = field(default_factory=Usage)
    cost: Cost = field(default_factory=lambda: Cost())
    _lock: threading.Lock = field(default_factory=threading.Lock)

    def __post_init__(self) -> None:
        if self.pricing is None:
            self.cost = UNPRICED

    def charge(self, usage: Usage, at: datetime | None = None) -> Cost:
        """Add the usage of one call requested at ``at``; return what that call cost."""
        spent = call_cost(usage, self.pricing, at)
        with self._lock:
            self.usage.add(usage)
            self.cost = self.cost + spent
        return spent

    def exhausted(self) -> dict[str, Any] | None:
        """The budget that is reached, as an event payload, or None while the run may go on."""
        with self._lock:
            tokens = self.usage.total
            cost = self.cost
        if self.budget.max_cost is not None and cost.priced and cost.amount >= self.budget.max_cost:
            return {"budget": "max_cost", "limit": self.budget.max_cost, "spent": round(cost.amount, _DIGITS),
                    "currency": cost.currency, "tokens": tokens}
        if self.budget.max_tokens is not None and tokens >= self.budget.max_tokens:
            return {"budget": "max_tokens", "limit": self.budget.max_tokens, "spent": tokens, "tokens": tokens}
        return None

    def snapshot(self) -> dict[str, Any]:
        """Tokens and cost so far (progress and ``model.responded``)."""
        with self._lock:
            return {"tokens": self.usage.total, "cost": self.cost.as_dict()}


def budget_sentence(reached: dict[str, Any]) -> str:
    """``the cost budget (max_cost $0.0100) was reached: $0.0123 spent``."""
    if reached["budget"] == "max_cost":
        return (f"the cost budget (max_cost ${reached['limit']:g}) was reached: "
                f"${reached['spent']:.4f} spent, {reached['tokens']} tokens")
    return f"the token budget (max_tokens {reached['limit']}) was reached: {reached['spent']} tokens used"


__all__ = ["CURRENCY", "UNPRICED", "Budget", "Cost", "RunMeter", "budget_sentence", "call_cost", "describe_cost"]
