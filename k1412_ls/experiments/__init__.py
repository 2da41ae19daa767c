"""Experiments over run logs: ``k1412 stats`` (aggregates) and ``k1412 eval`` (suites × arms, pool or Ray)."""

# What ``k1412 stats --group-by`` accepts; here so the CLI parser (also built for ``k1412 lsp``) need not
# import the stats module and, through it, the configuration and pydantic.
GROUP_BY = ("model", "policy", "experiment", "arm")
