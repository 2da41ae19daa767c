"""Every hard limit K1412 applies, in one place.

These hold whatever a model, a task or a configuration asks for: a configured
value may be lower, never higher (the configuration validates against them).
Nothing here imports the rest of K1412, so every layer can read them.
"""

from __future__ import annotations

from dataclasses import dataclass

MIB = 1024 * 1024


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
    # Bytes of a command's output kept: the first and the last; the middle is dropped (tools/processes/capture.py).
    output_head_bytes: int = 16 * 1024
    output_tail_bytes: int = 48 * 1024
    # One read_file window: lines, bytes, and characters of one line before it is cut.
    max_window_lines: int = 2000
    max_window_bytes: int = 256 * 1024
    max_line_chars: int = 10_000
    # Largest file loaded whole as a document; read_file streams windows of bigger ones.
    max_document_bytes: int = 16 * MIB
    # One write_file body, one apply_patch patch, the entries of one list_files answer.
    max_write_bytes: int = 2 * MIB
    max_patch_bytes: int = 10 * MIB
    max_list_entries: int = 2000
    # Plans and memories: steps of a plan, characters of a step and of a memory, memories one recall returns.
    max_plan_items: int = 50
    max_step_chars: int = 500
    max_memory_chars: int = 2000
    max_recall: int = 100

    def output_tokens(self, requested: int) -> int:
        """Tokens one model reply may generate."""
        return max(1, min(int(requested), self.max_output_tokens))

    def iterations(self, requested: int, *, depth: int = 0) -> int:
        """Loop iterations for an agent at ``depth`` (sub-agents get at most ``max_subagent_iterations``)."""
        ceiling = self.max_subagent_iterations if depth > 0 else self.max_iterations
        return max(1, min(int(requested), ceiling))


LIMITS = Limits()

__all__ = ["LIMITS", "Limits"]
