"""Caps on generation length, iterations and batch size."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any


@dataclass(frozen=True)
class Caps:
    """Hard limits the loop applies whatever a model or configuration asks for."""

    max_calls_per_response: int = 8
    max_rejections: int = 2
    max_subagent_iterations: int = 8
    max_iterations: int = 1000
    max_output_tokens: int = 131_072
    max_command_timeout_s: float = 900.0

    def output_tokens(self, requested: int) -> int:
        """Tokens one model reply may generate."""
        return max(1, min(int(requested), self.max_output_tokens))

    def iterations(self, requested: int, *, depth: int = 0) -> int:
        """Loop iterations for an agent at ``depth`` (sub-agents get at most ``max_subagent_iterations``)."""
        ceiling = self.max_subagent_iterations if depth > 0 else self.max_iterations
        return max(1, min(int(requested), ceiling))

    def command_timeout(self, requested: Any) -> float:
        """A command's timeout in seconds: the requested value within (0, max], the maximum otherwise."""
        if isinstance(requested, bool) or not isinstance(requested, (int, float)) or requested <= 0:
            return self.max_command_timeout_s
        return min(float(requested), self.max_command_timeout_s)

    def split_batch(self, count: int) -> tuple[int, int]:
        """How many calls of a response run and how many are answered "not run"."""
        run = min(max(count, 0), self.max_calls_per_response)
        return run, max(count, 0) - run
