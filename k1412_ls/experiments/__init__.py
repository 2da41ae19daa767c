"""Experiments over run logs: ``k1412 stats`` (aggregates) and ``k1412 eval`` (suites × arms, pool or Ray)."""
