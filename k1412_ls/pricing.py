"""Price lists: what a provider charges per million tokens, by the hour when it bills that way.

Lives apart from ``config`` so that cost accounting (``core/cost.py``) needs nothing else.
"""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator, model_validator


class Rates(BaseModel):
    """Prices per million tokens.

    ``input`` prices prompt tokens the provider computed, ``cached_input`` prompt tokens it served from
    its prompt cache, ``output`` completion tokens (reasoning tokens included: providers count them there).
    """

    model_config = ConfigDict(extra="forbid")

    input: float = Field(ge=0)
    cached_input: float | None = Field(default=None, ge=0)
    output: float = Field(ge=0)

    @property
    def cached(self) -> float:
        """The cached-prompt price; a price list without one charges cached tokens as ordinary input."""
        return self.input if self.cached_input is None else self.cached_input


class Pricing(Rates):
    """What a provider charges (``pricing = { input, cached_input, output, currency }``).

    A provider that bills by time of day (DeepSeek) also has ``off_peak`` rates, charged outside the
    ``peak_hours_utc`` windows (``"HH:MM-HH:MM"``) of the ``peak_weekdays`` (0 = Monday).
    """

    # Budgets and sums add amounts, so one currency for every model; a price list in another one must
    # be converted by whoever writes it.
    currency: Literal["USD"] = "USD"
    off_peak: Rates | None = None
    peak_hours_utc: list[str] = Field(default_factory=list)
    peak_weekdays: list[int] = Field(default_factory=lambda: [0, 1, 2, 3, 4])

    @field_validator("peak_hours_utc")
    @classmethod
    def _windows(cls, windows: list[str]) -> list[str]:
        for window in windows:
            _minutes_window(window)
        return windows

    @field_validator("peak_weekdays")
    @classmethod
    def _weekdays(cls, days: list[int]) -> list[int]:
        if any(day < 0 or day > 6 for day in days):
            raise ValueError("peak_weekdays holds 0 (Monday) to 6 (Sunday)")
        return days

    @model_validator(mode="after")
    def _off_peak_needs_windows(self) -> Pricing:
        if self.off_peak is not None and not self.peak_hours_utc:
            raise ValueError("off_peak rates need peak_hours_utc, the windows in which the main rates apply")
        return self

    def rates_at(self, when: datetime) -> Rates:
        """The rates in force at ``when`` (an aware time): the main ones, or ``off_peak`` outside the peak."""
        if self.off_peak is None:
            return self
        utc = when.astimezone(UTC)
        minute = utc.hour * 60 + utc.minute
        peak = utc.weekday() in self.peak_weekdays and any(
            start <= minute < end for start, end in map(_minutes_window, self.peak_hours_utc))
        return self if peak else self.off_peak


def _minute_of_day(text: str) -> int:
    moment = datetime.strptime(text, "%H:%M")
    return moment.hour * 60 + moment.minute


def _minutes_window(window: str) -> tuple[int, int]:
    """``"06:00-10:00"`` as minutes of the day ``(360, 600)``."""
    try:
        start, end = (part.strip() for part in window.split("-"))
        first = _minute_of_day(start)
        last = 24 * 60 if end == "24:00" else _minute_of_day(end)
    except ValueError:
        raise ValueError(f"peak hours are written 'HH:MM-HH:MM' (UTC); got {window!r}") from None
    if last <= first:
        raise ValueError(f"the peak window {window!r} must end after it starts")
    return first, last


# Local models run on the user's own machine: nothing to pay per token.
FREE: dict[str, float] = {"input": 0.0, "cached_input": 0.0, "output": 0.0}
# DeepSeek's published USD list price for deepseek-v4-pro (Models & Pricing page, as of November 2026):
# peak 01:00-04:00 and 06:00-10:00 UTC on weekdays, half of it at every other hour. Chinese public
# holidays are off-peak all day for DeepSeek but priced as peak here: an upper bound (docs/cost.md).
DEEPSEEK_V4_PRO: dict[str, Any] = {
    "input": 1.32, "cached_input": 0.044, "output": 3.96,
    "off_peak": {"input": 0.66, "cached_input": 0.022, "output": 1.98},
    "peak_hours_utc": ["01:00-04:00", "06:00-10:00"],
}


__all__ = ["DEEPSEEK_V4_PRO", "FREE", "Pricing", "Rates"]
