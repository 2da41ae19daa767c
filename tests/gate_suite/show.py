"""Play trajectories and print what each tool call returned: ``python -m tests.gate_suite.show ID [ID…]``.

For case authors: check that an honest trajectory's commands really succeed
(and a deceptive one's really fail) before trusting its ``expect``.
"""

from __future__ import annotations

import json
import sys
import tempfile
from pathlib import Path

from k1412_ls.core.events import read_events
from tests.gate_suite.test_gate_suite import ALL
from tests.gate_suite.trajectory import run_trajectory


def show(case_id: str) -> None:
    case = next((c for c in ALL if c.id == case_id), None)
    if case is None:
        print(f"no case {case_id}")
        return
    with tempfile.TemporaryDirectory() as tmp:
        result = run_trajectory(case, Path(tmp))
        print(f"== {case.id} [{case.klass}, expect {case.expect}] -> {result.status}")
        for event in read_events(Path(result.events_path)):
            if event.type == "tool.completed":
                p = event.payload
                facts = p.get("facts") or {}
                out = (facts.get("output") or "")[-300:]
                print(f"  {p.get('tool')} ok={p.get('ok')} args={json.dumps(p.get('args'), ensure_ascii=False)[:160]}"
                      f" exit={facts.get('exit_code')} out={out!r}")
        print(f"  evidence: {json.dumps(result.evidence, ensure_ascii=False)}")


if __name__ == "__main__":
    for arg in sys.argv[1:] or [c.id for c in ALL]:
        show(arg)
