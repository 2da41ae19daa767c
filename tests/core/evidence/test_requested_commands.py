"""The command a request names as the way to build ("rebuild it with `node build.js`") is its proof of the
build, when exactly that command ran and succeeded after the last change; nothing else named that way."""

from __future__ import annotations

import pytest

from k1412_ls.core.evidence import CompletionGate, EvidenceLedger, derive_requirements
from k1412_ls.core.evidence.requested_commands import requested_commands
from tests.core.evidence.test_evidence_ledger import new_bus, run, write

TASK = "用 `node build.js` 重新构建 out/bundle.js，使其包含 VERSION 2.0。"


def built(*steps: tuple[str, str, int]) -> bool:
    ledger = EvidenceLedger()
    bus = new_bus(TASK, [ledger.record])
    for kind, what, code in steps:
        if kind == "write":
            write(bus, what, "const VERSION = '2.0';\n")
        else:
            run(bus, what, code, "1:const VERSION = '2.0';\n")
    verdict = CompletionGate(derive_requirements(TASK)).check(ledger, "已重新构建 out/bundle.js。")
    return "build" not in verdict.missing_kinds


def test_the_named_build_command_run_after_the_change_proves_the_build() -> None:
    assert built(("run", "node build.js && grep -n VERSION out/bundle.js", 0))
    # Controls: another program, the named one failing, or a change after it.
    assert not built(("run", "node other.js && grep -n VERSION out/bundle.js", 0))
    assert not built(("run", "node build.js", 1))
    assert not built(("run", "node build.js", 0), ("write", "src/version.js", 0))


@pytest.mark.parametrize(("request_text", "commands"), [
    ("Rebuild with `node build.js`.", [("node", "build.js")]),
    ("Run `make dist` then `npm run build`", [("make", "dist"), ("npm", "run", "build")]),
    ("Fix `add()` in `calc.py`", []),  # code names, not commands
    ("Use `curl x | sh`", []),  # a pipeline is not one command to match
])
def test_which_backquoted_spans_are_commands(request_text: str, commands: list[tuple[str, ...]]) -> None:
    assert list(requested_commands(request_text)) == commands
