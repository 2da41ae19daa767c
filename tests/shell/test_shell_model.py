"""The shared shell model: which simple commands a line runs, and whose exit status reaches the line."""

from __future__ import annotations

import pytest

from k1412_ls.core.evidence.invocations import command_shape
from k1412_ls.shell import parse_line


def reach(command: str) -> dict[str, bool]:
    """program → whether its status reaches the line (first occurrence of each program)."""
    found: dict[str, bool] = {}
    for simple in parse_line(command).commands:
        found.setdefault(simple.argv[0], simple.reaches)
    return found


@pytest.mark.parametrize(("command", "pytest_reaches"), [
    ("pytest -q", True),
    ("pytest -q || true", False),
    ("pytest; exit 0", False),
    ("(pytest); true", False),
    ("set +e; pytest; echo finished", False),
    ("pytest &", False),
    ("! pytest", False),
    ("if pytest; then echo ok; fi", False),
    ("x=$(pytest); echo $x", False),
    ("while pytest; do break; done", False),
    ("pytest && echo ok", True),
    ("cd sub && pytest -q 2>&1 | tail -5", True),
    ("set -e; pytest; echo done", True),
    ("set -o errexit\npytest\necho done", True),
    ("{ pytest; }", True),
    ("(cd sub && pytest)", True),
    ("FOO=1 timeout 60 pytest -q", True),
    ("bash -c 'pytest; true'", False),
    ("bash -c 'pytest'", True),
    ("sh -c \"pytest -q && echo ok\"", True),
])
def test_status_reach(command: str, pytest_reaches: bool) -> None:
    line = parse_line(command)
    assert line.parsed
    runners = [c for c in line.commands if c.argv[-1:] != [] and "pytest" in (c.argv[0], *c.argv[:3])
               and c.argv[0] not in ("bash", "sh", "timeout")]
    if not runners:  # wrapped: timeout 60 pytest
        runners = [c for c in line.commands if "pytest" in c.argv]
    assert runners and runners[0].reaches is pytest_reaches, [(c.argv, c.reaches) for c in line.commands]


@pytest.mark.parametrize(("command", "words"), [
    ('echo "3 passed; 0 failed"', [["echo", "3 passed; 0 failed"]]),
    ("printf '%s\\n' 'a b'", [["printf", "%s\\n", "a b"]]),
    ("echo a\\ b", [["echo", "a b"]]),
    ("python3 -c \"print('x'); import sys\"", [["python3", "-c", "print('x'); import sys"]]),
    ("echo $'a\\tb'", [["echo", "a\tb"]]),
])
def test_quotes_are_removed_like_bash(command: str, words: list[list[str]]) -> None:
    assert [c.argv for c in parse_line(command).commands] == words


def test_here_document_is_stdin_not_commands() -> None:
    line = parse_line("python3 - <<'EOF'\nimport os; os.system('rm -rf /')\nEOF\n")
    assert [c.argv[0] for c in line.commands] == ["python3"]
    assert line.commands[0].stdin and "os.system" in (line.commands[0].heredoc or "")


def test_expansions_are_unknown_words() -> None:
    simple = parse_line('pytest "$TARGET" ${X}y').commands[0]
    assert simple.words[1:] == (None, None) and simple.dynamic


@pytest.mark.parametrize(("command", "why"), [
    ("trap 'exit 0' EXIT; pytest", "trap"),
    ("exec 3>&-; pytest", "descriptor"),
    ("pytest 3>/dev/null", "descriptor"),
    ("pytest() { echo '5 passed'; }; pytest", "function"),
    ("PATH=.:$PATH pytest", "PATH"),
    ("BASH_ENV=x bash -c pytest", "BASH_ENV"),
    ("unset -f pytest; pytest", "unset -f"),
    ("set +o pipefail; pytest | tail -1", "pipefail"),
    ("alias pytest=true; pytest", "alias"),
])
def test_tampering_is_named(command: str, why: str) -> None:
    assert why in (parse_line(command).tampered or "")


@pytest.mark.parametrize("command", [
    "pytest -q 2>&1 | tee log.txt", "set -o pipefail; pytest | tail -5", "python3 app.py > out.txt 2>&1",
    "cd src && make", "git status && git diff",
])
def test_ordinary_lines_are_not_tampered(command: str) -> None:
    line = parse_line(command)
    assert line.parsed and line.tampered is None


def test_unbalanced_quotes_do_not_parse() -> None:
    assert not parse_line("pytest 'unterminated").parsed


@pytest.mark.parametrize(("command", "role"), [
    ("echo '3 passed'", "print"),
    ("python3 -c \"import sys; print('3 passed'); sys.exit(0)\"", "print"),
    ("python3 - <<'EOF'\nprint('5 passed in 0.1s')\nEOF", "print"),
    ("cat <<EOF\n3 passed\nEOF", "print"),
    ("node -e \"console.log('ok')\"", "print"),
    ("bash -c 'echo 3 passed'", "print"),
    ("python3 -c 'import calc; print(calc.add(2, 3))'", "inline"),
    ("ls -la && pwd", "probe"),
    ("pip install -e .", "setup"),
    ("git commit -am x", "commit"),
    ("git add -A", "vcs"),
    ("gcc -o main main.c", "build"),
    ("make", "build"),
    ("python3 -m pytest -q", "test"),
    ("python3 -m unittest discover", "test"),
    ("node --test", "test"),
    ("cargo test", "test"),
    ("go test ./...", "test"),
    ("npm test", "test"),
    ("make test", "test"),
    ("./test_add", "test"),
    ("python3 app.py", "run"),
    ("./main", "run"),
])
def test_roles(command: str, role: str) -> None:
    assert command_shape(command).role == role


@pytest.mark.parametrize(("command", "narrowed"), [
    ("pytest", None), ("pytest tests/", None), ("python3 -m pytest -q .", None),
    ("pytest -k 'not test_add'", "-k"), ("pytest --co -q", "--co"), ("pytest -m 'not slow'", "-m"),
    ("pytest --deselect t.py::test_a", "--deselect"), ("pytest test_x.py::test_a", "test id"),
    ("pytest --lf", "--lf"), ("node --test --test-name-pattern=add", "--test-name-pattern"),
    ("cargo test add", "filter"), ("go test -run TestAdd ./...", "-run"),
    ("python3 -m unittest test_calc.TestAdd.test_add", "dotted"),
])
def test_narrowing_is_named(command: str, narrowed: str | None) -> None:
    suite = command_shape(command).tests[0].suite
    assert suite is not None
    if narrowed is None:
        assert suite.narrowed is None and suite.whole
    else:
        assert narrowed in (suite.narrowed or "")


def test_cd_rebases_the_suite() -> None:
    shape = command_shape("cd pkg_b && python3 -m pytest -q")
    suite = shape.tests[0].suite
    assert suite is not None and shape.tests[0].cwd == "pkg_b"
    assert not suite.rebased("pkg_b").whole and suite.rebased("tests").whole


@pytest.mark.parametrize(("command", "faked"), [
    ("pytest -q; echo \"exit=$?\"", False),
    ("pytest -q && echo done", False),
    ("echo '5 passed in 0.1s'; pytest -q", True),
    ("S='3 passed'; echo $S; pytest -q", True),
    ("echo \"$(python3 fake.py)\"; pytest -q", True),
    ("printf 'Ran 3 tests\\n\\nOK\\n'", True),
])
def test_lines_that_print_their_own_summaries_prove_no_tests(command: str, faked: bool) -> None:
    assert command_shape(command).faked_summary is faked
