"""Test runs judged in the context of the whole run: what the run changed before them, what the workspace held.

A test invocation's own line says what it selects (``commands``/``placement``); two things outside the
line can still make its summary prove less than it shows:

- **a shadowed runner**: ``python3 -m pytest`` (``-m unittest``, ``python3 tests/test_x.py``) imports from
  its directory first, so a ``pytest/``, ``pytest.py``, ``_pytest/``, ``unittest.py`` (or a library module
  the runner imports, ``shadows.SHADOW_MODULES``) there runs instead of the runner. Such a run, when the
  workspace had that module at its root when the run started or the run created or changed it there
  before the test ran, has an ``unknown`` outcome (a failure it reports still counts);
- **changed runner configuration**: a pytest run after the run changed ``pytest.ini``, ``.pytest.ini``,
  ``tox.ini``, ``setup.cfg``, ``pyproject.toml`` (in the run's directory or above it) or any
  ``conftest.py`` in a way that can narrow the selection (``runner_config``) is a narrowed run: it passes,
  but it is not the whole suite and does not stand for an earlier failure;
- **another copy**: a pass of a line that compiled a namesake or set the import path elsewhere
  (``other_copies``) for a source file the run changed before it has an ``unknown`` outcome;
- **bent tests**: a pass after the run weakened a test file (changed or removed an existing test, added a
  skip or code that runs on import; ``test_integrity``) has an ``unknown`` outcome, unless the request asks
  for the tests themselves to change. A change the run undid before the test ran does not count.
"""

from __future__ import annotations

import posixpath
from dataclasses import replace

from k1412_ls.core.evidence.ledger import IntegrityEntry, RunEntry, WriteEntry
from k1412_ls.core.evidence.line_outcomes import TestOutcome
from k1412_ls.core.evidence.other_copies import other_copy
from k1412_ls.core.evidence.requirements import Requirements
from k1412_ls.core.evidence.runner_config import is_pytest_config, narrowing_change
from k1412_ls.core.evidence.shadows import shadowed_module
from k1412_ls.text.runner_summaries import Suite
from k1412_ls.text.vocabulary import is_source_path


def runs_in_context(writes: list[WriteEntry], runs: list[RunEntry], requirements: Requirements,
                    integrity: list[IntegrityEntry] | None = None) -> list[RunEntry]:
    """``runs`` with each test outcome judged against what came before it (see the module docstring)."""
    commands = {run.seq: run.command for run in runs if run.source == "exec"}
    config: list[tuple[WriteEntry, str]] = []
    for entry in writes:
        if is_pytest_config(entry.path) or (entry.from_path and is_pytest_config(entry.from_path)):
            why = narrowing_change(entry.path, entry.action, entry.by_command, commands.get(entry.seq), entry.tool)
            if entry.action == "move" and entry.from_path and is_pytest_config(entry.from_path):
                why = why or narrowing_change(entry.from_path, "delete", True, None, entry.tool)
            if why:
                config.append((entry, why))
    judged: list[RunEntry] = []
    for run in runs:
        bent = None if requirements.test_edits else bent_tests(integrity or [], run.seq, requirements.tests_oracle)
        tests = tuple(_judged(test, run.seq, writes, config, requirements, bent) for test in run.outcome.tests)
        elsewhere = _checked_elsewhere(run, writes) if tests else None
        if elsewhere:
            tests = tuple(TestOutcome(t.suite, "unknown", elsewhere, t.import_dir) if t.outcome == "pass" else t
                          for t in tests)
        judged.append(run if tests == run.outcome.tests else replace(run, outcome=replace(run.outcome, tests=tests)))
    return judged


def _names_runner(path: str, family: str) -> bool:
    """Whether a change to ``path`` can change what the runner ``family`` runs (then the start probe is stale)."""
    name = posixpath.basename(path)
    if family.startswith("file:"):
        return path == family[5:]
    return name in ("Makefile", "makefile", "GNUmakefile") if "make" in family else name == "package.json"


def _checked_elsewhere(run: RunEntry, writes: list[WriteEntry]) -> str | None:
    """Why ``run``'s tests checked another copy of a source file the run changed before them, or None."""
    changed = dict.fromkeys(w.path for w in writes if w.seq <= run.seq and not w.removes and is_source_path(w.path))
    return next((why for path in changed for why in (other_copy(run.shape, run.cwd, path),) if why), None)


def bent_tests(integrity: list[IntegrityEntry], seq: int, oracle: bool = True) -> IntegrityEntry | None:
    """The first test file whose state as of event ``seq`` takes away what its tests checked, if any.

    Where the tests are not the oracle of the work (a behaviour change, not a fix), changing what a test
    checks is part of the change; removing, skipping or hooking tests never is."""
    latest: dict[str, IntegrityEntry] = {}
    for entry in integrity:
        if entry.seq <= seq:
            latest[entry.path] = entry
    return next((e for e in latest.values() if e.voids_proof and (oracle or e.how != "changed")), None)


def _judged(test: TestOutcome, seq: int, writes: list[WriteEntry], config: list[tuple[WriteEntry, str]],
            requirements: Requirements, bent: IntegrityEntry | None = None) -> TestOutcome:
    if test.outcome not in ("pass", "none"):
        return test
    if bent is not None:
        why = (f"{bent.why} before this test run, so its pass proves nothing about the code (the request did "
               "not ask for the tests to change)")
        return TestOutcome(test.suite, "unknown", why, test.import_dir)
    at_root = test.suite.family.startswith("file:") or all(t in ("", ".") for t in test.suite.targets)
    if test.outcome == "pass" and at_root and test.suite.family in requirements.hollow and not any(
            w.seq <= seq and _names_runner(w.path, test.suite.family) for w in writes):
        what = test.suite.family.split(":", 1)[1]
        return TestOutcome(test.suite, "none", f"{what} runs no test: it only defines or prints", test.import_dir)
    if test.import_dir is not None:
        why = _shadowed(test, seq, writes, requirements)
        if why:
            return TestOutcome(test.suite, "unknown", why, test.import_dir)
    if test.suite.family == "pytest" and not test.suite.narrowed:
        for entry, why in config:
            if entry.seq <= seq and _config_applies(entry.path, test.suite):
                suite = Suite(test.suite.family, test.suite.targets, why, test.suite.collect_only, "")
                return TestOutcome(suite, test.outcome, test.why, test.import_dir)
    return test


def _shadowed(test: TestOutcome, seq: int, writes: list[WriteEntry], requirements: Requirements) -> str | None:
    where = test.import_dir or "."
    found = [s for s in requirements.shadows if where in ("", ".")]
    found += [m for w in writes if w.seq <= seq and not w.removes
              for m in (shadowed_module(w.path, where),) if m is not None]
    if not found:
        return None
    place = "the workspace root" if where in ("", ".") else where
    return (f"{found[0]} in {place} shadows the module the test runner imports, so the run may not be the "
            f"real {test.suite.family.removeprefix('file:')} and its summary proves nothing")


def _config_applies(path: str, suite: Suite) -> bool:
    """Whether pytest reads ``path`` for ``suite``: any conftest.py; an ini file in or above its directory."""
    if posixpath.basename(path) == "conftest.py":
        return True
    folder = posixpath.dirname(path.removeprefix("./")) or "."
    if folder == ".":
        return True
    places = suite.targets or (".",)
    return any(t == folder or t.startswith(folder + "/") or t.startswith("/") or t.startswith("<")
               for t in places)
