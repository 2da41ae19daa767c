"""``k1412 replay``: read a run's event log and re-check its verdict from the events alone."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

from k1412_ls.config import ConfigError
from k1412_ls.core.events import Event, read_events
from k1412_ls.core.evidence.replay import recheck

TERMINAL_TYPES = {"run.completed": "completed", "run.unverified": "unverified", "run.failed": "failed",
                  "run.cancelled": "cancelled"}


@dataclass
class ReplayReport:
    path: Path
    events: list[Event]
    recorded: str | None
    recomputed: str
    evidence: dict[str, list[str]]
    agrees: bool

    def as_dict(self) -> dict[str, Any]:
        return {"path": str(self.path), "run_id": self.events[0].run_id if self.events else None,
                "events": len(self.events), "recorded": self.recorded, "recomputed": self.recomputed,
                "evidence": self.evidence, "agrees": self.agrees}


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
    """Render nothing; compute the recorded and recomputed verdicts of one log."""
    try:
        events = read_events(path)
    except (OSError, UnicodeDecodeError, ValueError) as exc:
        raise ConfigError(f"{path} is not a K1412 event log ({type(exc).__name__}).") from None
    if not events:
        raise ConfigError(f"{path} holds no events.")
    recorded = next((TERMINAL_TYPES[e.type] for e in reversed(events) if e.type in TERMINAL_TYPES and e.depth == 0),
                    None)
    verdict = recheck(events)
    recomputed = "completed" if verdict.complete else "unverified"
    evidence = {"required": list(verdict.required), "satisfied": list(verdict.satisfied),
                "missing": list(verdict.missing)}
    if recorded in ("completed", "unverified"):
        agrees = recorded == recomputed
    else:
        # Failed and cancelled runs end on facts other than evidence; the re-check only reports it.
        agrees = True
    final = recorded if recorded in ("failed", "cancelled") else recomputed
    return ReplayReport(path, events, recorded, final, evidence, agrees)
