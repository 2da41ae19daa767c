"""Command guards: interactive programs, documents run as programs, duplicates in a batch."""

from __future__ import annotations

from typing import Any

import pytest

from k1412_ls.core.guards import (
    GuardState,
    check_command,
    find_duplicate_commands,
)
from k1412_ls.core.model_port import ToolCall
from tests.support.guard_asserts import assert_refusal

# ---------------------------------------------------------------------------
# Interactive commands

@pytest.mark.parametrize("command, refused_as", [
    ("python3", "python3 with no arguments starts an interactive session"),
    ("python", "python with no arguments"),
    ("python3.11", "python3.11 with no arguments"),
    ("/usr/bin/python3", "python3 with no arguments"),
    ("env python3", "python3 with no arguments"),
    ("/usr/bin/env -i FOO=1 python3", "python3 with no arguments"),
    ("exec python3", "python3 with no arguments"),
    ("sudo -u root python3", "python3 with no arguments"),
    ("FOO=1 python3", "python3 with no arguments"),
    ("timeout 10 python3", "python3 with no arguments"),
    ("python3 2>/dev/null", "python3 with no arguments"),
    ("cd src && python3", "python3 with no arguments"),
    ("uv run python", "python with no arguments"),
    ("ipython", "ipython with no arguments"),
    ("python3 -i", "python3 -i starts an interactive session"),
    ("python3 -i app.py", "python3 -i starts an interactive session"),
    ("python3 -u", "python3 -u starts an interactive session"),
    ("bash", "bash with no arguments"),
    ("sh", "sh with no arguments"),
    ("zsh", "zsh with no arguments"),
    ("bash -l", "bash -l starts an interactive session"),
    ("node", "node with no arguments"),
    ("node --interactive", "node --interactive starts"),
    ("irb", "irb with no arguments"),
    ("irb app.rb", "irb app.rb starts an interactive session"),
    ("ruby", "ruby with no arguments"),
    ("psql", "psql with no arguments"),
    ("psql mydb", "psql mydb starts an interactive session"),
    ("sqlite3", "sqlite3 with no arguments"),
    ("sqlite3 app.db", "sqlite3 app.db starts an interactive session"),
    ("R", "R with no arguments"),
    ("ghci", "ghci with no arguments"),
    ("vim notes.py", "vim is an interactive full-screen program"),
    ("nano", "nano is an interactive full-screen program"),
    ("top", "top is an interactive full-screen program"),
    ("less", "less with no arguments"),
    ("bash -c 'python3'", "python3 with no arguments"),
    ("bash -lc 'cd src && node'", "node with no arguments"),
])
def test_interactive_commands_are_refused(command: str, refused_as: str) -> None:
    result = GuardState().precheck("run_command", {"command": command})
    error = assert_refusal(result, refused_as)
    assert "cannot work here" in error
    assert result is not None and result.facts == {"kind": "guard", "guard": "command"}


@pytest.mark.parametrize("command", [
    "echo 'print(1)' | python3",
    "python3 < input.py",
    "python3 <<< 'print(1)'",
    "python3 script.py",
    "python3 script.py -i",
    "python3 -m pytest -q",
    "python3 -c 'print(1)'",
    "python3 -uc 'print(1)'",
    "python3 -Wignore script.py",
    "python3 --version",
    "python3 -V",
    "/usr/bin/env python3 tool.py",
    "bash -c 'ls -la'",
    "bash -ec 'make test'",
    "bash build.sh",
    "echo ls | bash -s",
    "node -e 'console.log(1)'",
    "node -v",
    "node server.js",
    "ruby -e 'puts 1'",
    "psql -c 'select 1'",
    "sqlite3 app.db 'select 1'",
    "sqlite3 app.db < schema.sql",
    "top -b -n 1",
    "git log | less",
    "less README.md",
    "cat README.md",
    "ls -la && echo done",
    "Rscript analysis.R",
    "python3 'unbalanced",
    "cat <<EOF\npython3\nEOF",
    "echo 'print(1)' | bash -c 'python3'",
    "bash -c 'python3 -m pytest'",
])
def test_non_interactive_commands_may_run(command: str) -> None:
    assert check_command(command) is None
    assert GuardState().precheck("run_command", {"command": command}) is None


def test_background_processes_get_the_same_command_guard() -> None:
    assert_refusal(GuardState().precheck("process_start", {"command": "node"}), "node with no arguments")
    assert GuardState().precheck("process_start", {"command": "python3 -m http.server 8000"}) is None


# ---------------------------------------------------------------------------
# Documents and data files run as programs

@pytest.mark.parametrize("command, refused_as", [
    ("./README.md", "./README.md is a document or data file, not a program"),
    ("docs/guide.rst", "docs/guide.rst is a document or data file"),
    ("./data.json", "./data.json is a document or data file"),
    ("python3 data.csv", "python3 cannot run data.csv: it is a document or data file, not a Python program"),
    ("python3 -u results.json", "python3 cannot run results.json"),
    ("bash notes.txt", "bash cannot run notes.txt"),
    ("sh image.png", "sh cannot run image.png"),
    ("node config.json", "node cannot run config.json: it is a document or data file, not a JavaScript program"),
    ("ruby Gemfile.lock", "ruby cannot run Gemfile.lock"),
    ("source README.md", "source cannot run README.md"),
    ("make && python3 report.md", "python3 cannot run report.md"),
])
def test_documents_run_as_programs_are_refused(command: str, refused_as: str) -> None:
    error = assert_refusal(GuardState().precheck("run_command", {"command": command}), refused_as)
    assert "read_file" in error


@pytest.mark.parametrize("command", [
    "cat README.md",
    "head -n 5 data.csv",
    "python3 load.py data.csv",
    "python3 -m json.tool config.json",
    "python3 -c 'import json; json.load(open(\"a.json\"))'",
    "node build.js config.json",
    "bash run.sh notes.txt",
    "./run.sh",
    ". .env",
    "source .venv/bin/activate",
    "jq . config.json",
])
def test_programs_reading_documents_may_run(command: str) -> None:
    assert check_command(command) is None



# ---------------------------------------------------------------------------
# Duplicate commands in one batch

def _call(index: int, name: str = "run_command", **arguments: Any) -> ToolCall:
    return ToolCall(id=f"c{index}", name=name, arguments=arguments)


@pytest.mark.parametrize("calls, expected", [
    ([_call(0, command="pytest -q"), _call(1, command="pytest -q")], {1: 0}),
    ([_call(0, command="pytest  -q "), _call(1, command=" pytest -q")], {1: 0}),
    ([_call(0, command="ls|wc -l"), _call(1, command="ls | wc -l")], {1: 0}),
    ([_call(0, command="pytest", cwd="."), _call(1, command="pytest")], {1: 0}),
    ([_call(0, command="pytest", cwd="./src/"), _call(1, command="pytest", cwd="src")], {1: 0}),
    ([_call(0, command="pytest", cwd="src"), _call(1, command="pytest", cwd="tests")], {}),
    ([_call(0, command="sleep 1", timeout_s=5), _call(1, command="sleep 1", timeout_s=60)], {}),
    ([_call(0, command="echo 'a  b'"), _call(1, command="echo 'a b'")], {}),
    ([_call(0, command="a"), _call(1, command="b"), _call(2, command="a"), _call(3, command="a")], {2: 0, 3: 0}),
    ([_call(0, "process_start", command="srv"), _call(1, "process_start", command="srv")], {}),
    ([_call(0, "read_file", path="a"), _call(1, "read_file", path="a")], {}),
    ([_call(0, command="make"), _call(1, "write_file", path="a", content="x"), _call(2, command="make")],
     {2: 0}),
])
def test_duplicate_commands_in_a_batch(calls: list[ToolCall], expected: dict[int, int]) -> None:
    assert find_duplicate_commands(calls) == expected
