"""Prices by the hour (DeepSeek bills half outside its peak windows) and price-list validation."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest

from k1412_ls.config import build_config
from k1412_ls.core.cost import Budget, RunMeter, call_cost
from k1412_ls.core.model_port import Usage
from k1412_ls.locations import ConfigError

DEEPSEEK = build_config({}).models["deepseek-v4-pro"].pricing
CALL = Usage(prompt_tokens=1_000_000, completion_tokens=1_000_000, cached_tokens=500_000)


@pytest.mark.parametrize(("when", "amount"), [
    (datetime(2026, 11, 30, 1, 0, tzinfo=UTC), 0.5 * 1.32 + 0.5 * 0.044 + 3.96),   # Monday 01:00 UTC: peak
    (datetime(2026, 11, 30, 9, 59, tzinfo=UTC), 0.5 * 1.32 + 0.5 * 0.044 + 3.96),  # last peak minute
    (datetime(2026, 11, 30, 10, 0, tzinfo=UTC), 0.5 * 0.66 + 0.5 * 0.022 + 1.98),  # off-peak again
    (datetime(2026, 11, 30, 4, 30, tzinfo=UTC), 0.5 * 0.66 + 0.5 * 0.022 + 1.98),  # between the windows
    (datetime(2026, 11, 29, 7, 0, tzinfo=UTC), 0.5 * 0.66 + 0.5 * 0.022 + 1.98),   # Sunday: off-peak all day
    (datetime(2026, 11, 30, 15, 0, tzinfo=UTC).astimezone(), 0.5 * 0.66 + 0.5 * 0.022 + 1.98),  # any zone
])
def test_deepseek_is_priced_at_the_rate_of_the_hour(when: datetime, amount: float) -> None:
    assert call_cost(CALL, DEEPSEEK, when).amount == pytest.approx(amount)


def test_the_meter_charges_each_call_at_its_own_hour_and_keeps_the_budget() -> None:
    meter = RunMeter(DEEPSEEK, Budget(max_cost=6.0))
    meter.charge(CALL, datetime(2026, 11, 30, 7, 0, tzinfo=UTC))
    assert meter.exhausted() is None
    meter.charge(CALL, datetime(2026, 11, 30, 12, 0, tzinfo=UTC))
    reached = meter.exhausted()
    assert reached is not None and reached["budget"] == "max_cost"
    assert meter.cost.amount == pytest.approx(4.642 + 2.321)


@pytest.mark.parametrize(("pricing", "message"), [
    ({"input": 1, "output": 2, "currency": "EUR"}, "pricing.currency"),
    ({"input": -1, "output": 2}, "pricing.input"),
    ({"input": 1, "output": 2, "off_peak": {"input": 0.5, "output": 1}}, "off_peak rates need peak_hours_utc"),
    ({"input": 1, "output": 2, "off_peak": {"input": 0.5, "output": 1}, "peak_hours_utc": ["9-10"]}, "HH:MM-HH:MM"),
    ({"input": 1, "output": 2, "off_peak": {"input": 0.5, "output": 1}, "peak_hours_utc": ["01:00-04:00"],
      "peak_weekdays": [7]}, "0 (Monday) to 6 (Sunday)"),
])
def test_bad_price_lists_are_named(pricing: dict[str, object], message: str) -> None:
    with pytest.raises(ConfigError, match="pricing") as caught:
        build_config({"models": {"m": {"provider": "local", "provider_model": "m", "pricing": pricing}}})
    assert message in str(caught.value)
