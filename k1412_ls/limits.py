"""Every hard limit K1412 applies, in one place.

These hold whatever a model, a task or a configuration asks for: a configured
value may be lower, never higher (the configuration validates against them).
Nothing here imports the rest of K1412, so every layer can read them.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Limits:
    """Hard limits of one runtime; :data:`LIMITS` is the one every layer uses by default."""

    # Tool calls of one model response that run; the rest are answered "not run".
    max_calls_per_response: int = 8
    # Completion claims the evidence gate turns down before the run ends unverified.
    max_rejections: int = 2
    # Loop iterations of a sub-agent (spawn_agent, the editor's delegate) and of a root agent.
    max_subagent_iterations: int = 8
    max_iterations: int = 1000
    # Tokens one model reply may generate.
    max_output_tokens: int = 131_072
    # Seconds before a command and every process it started are killed.
    max_command_timeout_s: float = 900.0
    # Processes a command may have at once (the default of [sandbox] max_processes).
    max_processes: int = 1024
    # Background processes (process_start) of one run running at once.
    max_background_processes: int = 16
    # Seconds one process_poll may wait for its process to exit.
    max_process_wait_s: float = 30.0

    def output_tokens(self, requested: int) -> int:
        """Tokens one model reply may generate."""
        return max(1, min(int(requested), self.max_output_tokens))

    def iterations(self, requested: int, *, depth: int = 0) -> int:
        """Loop iterations for an agent at ``depth`` (sub-agents get at most ``max_subagent_iterations``)."""
        ceiling = self.max_subagent_iterations if depth > 0 else self.max_iterations
        return max(1, min(int(requested), ceiling))


LIMITS = Limits()

__all__ = ["LIMITS", "Limits"]
