"""``k1412 replay``: read a run's event log and re-check its verdict from the events alone."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

from k1412_ls.config import ConfigError
from k1412_ls.core.events import POLICY, Event, read_events
from k1412_ls.core.evidence.replay import compare_with_recorded

# What ``recorded`` says of a log that has no terminal event: the run was killed (or is still running).
UNFINISHED = "unfinished"


@dataclass
class ReplayReport:
    path: Path
    events: list[Event]
    recorded: str  # the status the run ended with, or UNFINISHED
    recomputed: str
    evidence: dict[str, list[str]]
    agrees: bool | None  # None: nothing to compare (an unfinished run)
    policy: str | None = None  # the policy whose rules judged the run when it ran (from the log's meta)
    rechecked_with: str = POLICY  # the rules of this K1412, which the re-check applies

    def as_dict(self) -> dict[str, Any]:
        return {"path": str(self.path), "run_id": self.events[0].run_id if self.events else None,
                "events": len(self.events), "recorded": self.recorded, "recomputed": self.recomputed,
                "evidence": self.evidence, "agrees": self.agrees, "policy": self.policy,
                "rechecked_with": self.rechecked_with}

    def describe_policies(self) -> str:
        """One line: which rules judged the run, and which rules re-checked it."""
        judged = self.policy or "an unknown policy"
        if judged == self.rechecked_with:
            return f"judged and re-checked with the {judged} rules"
        return (f"judged by the {judged} rules when it ran; re-checked with the {self.rechecked_with} rules, "
                "so a disagreement may come from the newer rules")


def load_run_log(run: str, state_dir: Path) -> Path:
    """A path to an existing log, given a file or a run id; ConfigError (exit 2) otherwise."""
    candidate = Path(run).expanduser()
    if candidate.is_file():
        return candidate
    by_id = state_dir / "runs" / f"{run}.jsonl"
    if by_id.is_file():
        return by_id
    raise ConfigError(f"No run log found for '{run}' (looked for the file and for {by_id}).")


def replay_report(path: Path) -> ReplayReport:
    """Compute the recorded and recomputed verdicts of one log."""
    try:
        events = read_events(path)
    except (OSError, UnicodeDecodeError, ValueError) as exc:
        raise ConfigError(f"{path} is not a K1412 event log ({type(exc).__name__}).") from None
    if not events:
        raise ConfigError(f"{path} holds no events.")
    comparison = compare_with_recorded(events)
    verdict = comparison.verdict
    evidence = {"required": list(verdict.required), "satisfied": list(verdict.satisfied),
                "missing": list(verdict.missing)}
    # Failed and cancelled runs end on facts other than evidence; the re-check only reports it.
    recomputed = comparison.recorded if comparison.agrees is None and comparison.recorded else comparison.recomputed
    policy = events[0].meta.get("policy") if isinstance(events[0].meta, dict) else None
    if comparison.recorded is None:
        return ReplayReport(path, events, UNFINISHED, comparison.recomputed, evidence, None,
                            policy if isinstance(policy, str) else None)
    return ReplayReport(path, events, comparison.recorded, recomputed, evidence, comparison.agrees is not False,
                        policy if isinstance(policy, str) else None)
