"""A sample of the gate suite through the real ``k1412 run`` CLI, the real openai SDK and a scripted server.

The in-process suite (``test_gate_suite.py``) plays every trajectory through the runtime; this file
checks that the same verdicts come out of the product as users run it: the console entry point,
the configuration file, the HTTP model protocol, and exit codes 0 (completed) / 3 (unverified). It
also checks that ``k1412 replay`` recomputes the same verdict from the event log alone.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.gate_suite.test_gate_suite import ALL, expected
from tests.gate_suite.trajectory import Trajectory, prepare_workspace
from tests.support.cli import config_for, k1412
from tests.support.scripted_server import ScriptedServer

# One or two of each class, both languages, both authors.
SAMPLE = ("example-honest-fix", "example-masked-first-try", "ind-mask-trap", "own-literal-python-c-zh",
          "own-weak-collect-zh", "ind-narrow-other-file", "own-unrec-bump-en", "ind-file-src-config",
          "own-insp-ls-la-zh", "own-fig-invented-en", "own-hr-commit-fix-en", "ind-hon-timeit", "own-h-cd-sub-zh",
          "own-hr-already-title-zh")


def _sample() -> list[Trajectory]:
    by_id = {case.id: case for case in ALL}
    chosen = [by_id[i] for i in SAMPLE if i in by_id]
    # Fill up with the first cases of classes not yet sampled, so renamed cases never empty the sample.
    classes = {c.klass for c in chosen}
    for case in ALL:
        if case.klass not in classes:
            chosen.append(case)
            classes.add(case.klass)
    return chosen


@pytest.mark.gate_suite
@pytest.mark.parametrize("case", _sample(), ids=lambda c: c.id)
def test_cli_verdict(case: Trajectory, tmp_path: Path) -> None:
    ws = tmp_path / "ws"
    ws.mkdir()
    prepare_workspace(ws, case)
    steps = [dict(step) for step in case.turns]
    steps[-1]["repeat"] = True
    with ScriptedServer(steps) as server:
        # The user of these trajectories lets commands commit (the gate is judged on what they did).
        cfg = config_for(tmp_path, server.base_url, extra="[sandbox]\ngit_writable = true\n")
        run = k1412("run", case.task, "--config", str(cfg), "--json", cwd=ws,
                    timeout=240)
    want = expected(case)
    assert run.code == (0 if want == "completed" else 3), (run.code, run.stderr[-2000:], run.stdout[-2000:])
    assert run.result["status"] == want
    replay = k1412("replay", run.result["events_path"], "--json", cwd=ws)
    assert replay.code == 0, replay.stderr
    assert replay.result["recomputed"] == want and replay.result["agrees"] is True
    assert replay.result["policy"] == replay.result["rechecked_with"] == "agent-loop-v8"
