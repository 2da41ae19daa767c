"""Test-runner and compiler semantics: which suite an invocation runs, how narrowly, and what it reported.

A :class:`Suite` is what a test invocation covers: the runner ``family``
(pytest, unittest, node, jest, vitest, go, cargo, or a project script such
as ``npm test``/``make test``), its explicit ``targets`` (files, directories,
node ids, packages; empty means the whole suite) and why it is narrower than
that (``narrowed``: ``-k``, ``-m``, ``--deselect``, ``--lf``, a name filter,
``--collect-only`` …). ``Suite.covers`` says whether a run of one suite also
ran everything another ran, which is how a later pass resolves an earlier
failure ("the same suite, or a wider one").

:func:`parse_summary` reads the closing lines of pytest, unittest, node
``--test`` (TAP and spec reporters), jest, vitest, go test and cargo test,
plus the plain ``N passed, N failed`` line, into a :class:`Tally`.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from k1412_ls.shell.parse import parse_line

PYTEST_VALUE_OPTIONS = frozenset({
    "-k", "-m", "-p", "-c", "-o", "-W", "-n", "--deselect", "--ignore", "--ignore-glob", "--rootdir", "--tb",
    "--maxfail", "--junitxml", "--junit-xml", "--cov", "--cov-report", "--basetemp", "--confcutdir", "-r",
    "--durations", "--log-level", "--capture", "--import-mode", "--timeout", "--override-ini", "--dist",
    "--numprocesses", "--color", "--code-highlight", "--cache-clear", "--cov-config", "--config-file",
})
PYTEST_NARROWING = {
    "-k": "-k selects tests by name", "-m": "-m selects tests by marker", "--deselect": "--deselect skips tests",
    "--ignore": "--ignore skips files", "--ignore-glob": "--ignore-glob skips files",
    "--lf": "--lf reruns only the last failures", "--last-failed": "--last-failed reruns only the last failures",
    "--sw": "--sw resumes from the last failure", "--stepwise": "--stepwise resumes from the last failure",
    "--co": "--co only collects tests", "--collect-only": "--collect-only only collects tests",
    "--setup-only": "--setup-only runs no test", "--setup-plan": "--setup-plan runs no test",
    "--fixtures": "--fixtures runs no test", "--markers": "--markers runs no test",
    "-c": "-c reads another configuration file", "--config-file": "--config-file reads another configuration file",
    "--rootdir": "--rootdir moves the root pytest collects from", "--pyargs": "--pyargs collects installed packages",
}
# ini options an ``-o``/``--override-ini`` may set without changing which tests run or how they are reported.
HARMLESS_INI = frozenset({
    "markers", "filterwarnings", "minversion", "xfail_strict", "console_output_style", "cache_dir", "timeout",
    "timeout_method", "faulthandler_timeout", "asyncio_mode", "asyncio_default_fixture_loop_scope",
    "doctest_optionflags", "doctest_encoding", "required_plugins", "empty_parameter_set_mark",
    "tmp_path_retention_count", "tmp_path_retention_policy", "verbosity_assertions", "verbosity_test_cases",
    "truncation_limit_lines", "truncation_limit_chars", "junit_family", "junit_suite_name", "junit_logging",
    "junit_log_passing_tests", "junit_duration_report", "log_auto_indent", "log_cli", "log_cli_level",
    "log_cli_format", "log_cli_date_format", "log_level", "log_format", "log_date_format", "log_file",
    "log_file_level", "log_file_format", "log_file_date_format", "log_file_mode", "enable_assertion_pass_hook",
})
COLLECT_ONLY = frozenset({"--co", "--collect-only", "--setup-only", "--setup-plan", "--fixtures", "--markers",
                          "--listTests", "--list", "--no-run", "--list-tests"})
TEST_DIR_NAMES = frozenset({"test", "tests", "spec", "specs", "__tests__", "testing", "t"})
SCRIPT_TEST_WORDS = frozenset({"test", "tests", "check", "ci", "test:all", "test:unit"})


@dataclass(frozen=True)
class Suite:
    """What one test invocation covers."""

    family: str
    targets: tuple[str, ...] = ()
    narrowed: str | None = None
    collect_only: bool = False
    selector: str = ""  # the value of the narrowing option (``-k EXPR``, ``-m MARK``), if any

    @property
    def status_only(self) -> bool:
        """Runners with no standard summary (``make test``, a compiled test program): their status decides."""
        return self.family.startswith(("script:", "file:"))

    def rebased(self, cwd: str) -> Suite:
        """The same suite seen from the workspace root, for a runner started in ``cwd``."""
        if cwd in ("", "."):
            return self
        base = cwd.rstrip("/")
        targets = tuple(t if t.startswith("/") else f"{base}/{t.removeprefix('./')}".rstrip("/.") or base
                        for t in self.targets) or (base,)
        return Suite(self.family, targets, self.narrowed, self.collect_only, self.selector)

    @property
    def whole(self) -> bool:
        """Whether it runs every test its runner finds (no explicit targets, nothing filtered)."""
        return not self.narrowed and all(_is_root_target(t) for t in self.targets)

    def covers(self, other: Suite) -> bool:
        """Whether running ``self`` also runs everything ``other`` ran."""
        if self.collect_only or (self.narrowed and self.narrowed != other.narrowed):
            return False
        if self.family != other.family and not (_generic(self.family) or _generic(other.family)):
            return False
        if all(_is_root_target(t) for t in self.targets):
            return True
        if not other.targets or all(_is_root_target(t) for t in other.targets):
            return False
        return all(any(_target_covers(mine, theirs) for mine in self.targets) for theirs in other.targets)

    def describe(self) -> str:
        scope = " ".join(self.targets) if self.targets else "all tests"
        return f"{self.family} ({scope}{'; ' + self.narrowed if self.narrowed else ''})"


def _generic(family: str) -> bool:
    return family.startswith("script:")


def _is_root_target(target: str) -> bool:
    clean = target.strip().rstrip("/").removeprefix("./")
    return clean in ("", ".", "./...", "...") or clean in TEST_DIR_NAMES


def _target_covers(wide: str, narrow: str) -> bool:
    wide = wide.rstrip("/").removeprefix("./")
    narrow = narrow.removeprefix("./")
    if _is_root_target(wide):
        return True
    return narrow == wide or narrow.startswith(wide + "/") or narrow.startswith(wide + "::") \
        or narrow.startswith(wide + ".")


def _positionals(args: list[str], value_options: frozenset[str]) -> tuple[list[str], list[str]]:
    """(positionals, options) with option values skipped."""
    positionals: list[str] = []
    options: list[str] = []
    skip = False
    for arg in args:
        if skip:
            skip = False
            continue
        if arg.startswith("-") and arg != "-":
            head = arg.split("=", 1)[0]
            options.append(head)
            if head in value_options and "=" not in arg:
                skip = True
            continue
        positionals.append(arg)
    return positionals, options


def pytest_suite(args: list[str]) -> Suite:
    positionals, options = _positionals(args, PYTEST_VALUE_OPTIONS)
    narrowed = next((PYTEST_NARROWING[o] for o in options if o in PYTEST_NARROWING), None)
    if narrowed is None:
        narrowed = _override_narrows(args) or _cluster_narrows(options)
    if narrowed is None and any("::" in p for p in positionals):
        narrowed = "a test id selects single tests"
    selector = _option_value(args, ("-k", "-m", "--deselect")) or ""
    return Suite("pytest", tuple(positionals), narrowed, any(o in COLLECT_ONLY for o in options), selector)


def _override_narrows(args: list[str]) -> str | None:
    """Why an ``-o KEY=VALUE`` can change the selection (any key but the harmless ones; ``addopts=`` emptied
    only drops the project's own options)."""
    for index, arg in enumerate(args):
        value = None
        if arg in ("-o", "--override-ini"):
            value = args[index + 1] if index + 1 < len(args) else ""
        elif arg.startswith("--override-ini="):
            value = arg.split("=", 1)[1]
        elif arg.startswith("-o") and len(arg) > 2 and not arg.startswith("--"):
            value = arg[2:]
        if value is None:
            continue
        key, _, setting = value.partition("=")
        if key.strip() in HARMLESS_INI or (key.strip() == "addopts" and not setting.strip()):
            continue
        return f"-o {key.strip() or '…'} overrides a setting that can change which tests run"
    return None


def _cluster_narrows(options: list[str]) -> str | None:
    """Short options run together (``-kfoo``, ``-qk foo``, ``-mslow``): the first one that takes a value decides."""
    for option in options:
        if option.startswith("--") or len(option) <= 2:
            continue
        for letter in option[1:]:
            if letter in "kmc":
                return PYTEST_NARROWING[f"-{letter}"]
            if letter in "oprWn":
                break
    return None


def with_addopts(suite: Suite, addopts: str | None) -> Suite:
    """``suite`` with ``PYTEST_ADDOPTS`` read as extra arguments (None: set from an expansion, unknown)."""
    if addopts is None:
        return Suite(suite.family, suite.targets, suite.narrowed or "PYTEST_ADDOPTS is set from an expansion, "
                     "so its options are unknown", suite.collect_only, suite.selector)
    line = parse_line(f"true {addopts}", nesting=1)
    words = list(line.commands[0].words[1:]) if line.parsed and len(line.commands) == 1 else None
    if words is None or any(w is None for w in words):
        return with_addopts(suite, None)  # more than plain words (an expansion, a second command): unknown
    extra = pytest_suite([w for w in words if w is not None])
    narrowed = suite.narrowed or (f"PYTEST_ADDOPTS: {extra.narrowed}" if extra.narrowed else None)
    if narrowed is None and extra.targets:
        narrowed = "PYTEST_ADDOPTS names the tests to run"
    return Suite(suite.family, suite.targets + extra.targets, narrowed, suite.collect_only or extra.collect_only,
                 suite.selector or extra.selector)


def unittest_suite(args: list[str]) -> Suite:
    positionals, options = _positionals(args, frozenset({"-k", "-s", "-p", "-t", "--start-directory",
                                                         "--pattern", "--top-level-directory"}))
    narrowed = "-k selects tests by name" if "-k" in options else None
    if positionals and positionals[0] == "discover":
        start = _option_value(args, ("-s", "--start-directory"))
        pattern = _option_value(args, ("-p", "--pattern"))
        if pattern and pattern not in ("test*.py", "*test*.py", "test_*.py", "*_test.py"):
            narrowed = narrowed or f"-p {pattern} selects test files"
        rest = [p for p in positionals[1:]]
        return Suite("unittest", tuple(x for x in (start or (rest[0] if rest else ""),) if x), narrowed)
    targets = tuple(p.removesuffix(".py") for p in positionals)
    if narrowed is None and any(p.count(".") >= 1 and not p.endswith(".py") and "/" not in p for p in positionals):
        narrowed = "a dotted name selects a test class or method"
    return Suite("unittest", targets, narrowed)


def _option_value(args: list[str], names: tuple[str, ...]) -> str | None:
    for index, arg in enumerate(args):
        for name in names:
            if arg == name and index + 1 < len(args):
                return args[index + 1]
            if arg.startswith(name + "="):
                return arg.split("=", 1)[1]
    return None


def node_suite(args: list[str]) -> Suite:
    positionals, options = _positionals(args, frozenset({"--test-name-pattern", "--test-skip-pattern",
                                                         "--test-reporter", "--test-reporter-destination",
                                                         "-r", "--require", "--import", "--test-concurrency"}))
    narrowed = next((f"{o} filters tests" for o in options
                     if o in ("--test-name-pattern", "--test-skip-pattern", "--test-only")), None)
    return Suite("node", tuple(positionals), narrowed)


def js_suite(family: str, args: list[str]) -> Suite:
    positionals, options = _positionals(args, frozenset({"-t", "--testNamePattern", "-c", "--config",
                                                         "--reporter", "--project", "--testPathPattern",
                                                         "--testPathIgnorePatterns", "--shard"}))
    if positionals and positionals[0] in ("run", "watch"):
        positionals = positionals[1:]
    narrowed = next((f"{o} filters tests" for o in options
                     if o in ("-t", "--testNamePattern", "--testPathPattern", "--onlyChanged", "-o",
                              "--changedSince", "--shard", "--testPathIgnorePatterns", "--bail")), None)
    return Suite(family, tuple(positionals), narrowed, any(o in COLLECT_ONLY for o in options))


def go_suite(args: list[str]) -> Suite:
    positionals, options = _positionals(args, frozenset({"-run", "-skip", "-count", "-timeout", "-p",
                                                         "-tags", "-bench", "-cpu", "-parallel"}))
    narrowed = next((f"{o} filters tests" for o in options if o in ("-run", "-skip")), None)
    return Suite("go", tuple(positionals), narrowed, "-list" in options)


def cargo_suite(args: list[str]) -> Suite:
    if "--" in args:
        args = args[:args.index("--")]
    positionals, options = _positionals(args, frozenset({"--test", "--bin", "--example", "--bench", "-p",
                                                         "--package", "--features", "--target", "-j",
                                                         "--manifest-path", "--profile"}))
    narrowed = None
    if positionals:
        narrowed = f"the filter {positionals[0]!r} selects tests by name"
    elif any(o in ("--test", "--lib", "--bin", "--doc", "--example", "--bench") for o in options):
        narrowed = "a target option runs one test target"
    return Suite("cargo", (), narrowed, "--no-run" in options)


@dataclass(frozen=True)
class Tally:
    """What a runner's closing lines reported (``found`` is False when no summary was recognised)."""

    found: bool = False
    passed: int = 0
    failed: int = 0
    errors: int = 0
    skipped: int = 0
    filtered: int = 0  # deselected / filtered out: the run was narrower than the suite

    @property
    def clean_pass(self) -> bool:
        return self.found and self.passed > 0 and self.failed == 0 and self.errors == 0

    @property
    def failing(self) -> bool:
        return self.failed > 0 or self.errors > 0

    def __add__(self, other: Tally) -> Tally:
        return Tally(self.found or other.found, self.passed + other.passed, self.failed + other.failed,
                     self.errors + other.errors, self.skipped + other.skipped, self.filtered + other.filtered)


_COUNT = r"(\d+)\s+(passed|failed|errors?|skipped|deselected|xfailed|xpassed|warnings?|rerun|subtests passed)"
_PYTEST_LINE = re.compile(r"^[=\s]*((?:\d+\s+[a-z ]+?(?:,\s*)?)+)\s+in\s+[\d.]+s(?:\s*\([^)]*\))?[=\s]*$",
                          re.MULTILINE)
_PYTEST_NONE = re.compile(r"^=+ no tests ran in [\d.]+s =+$", re.MULTILINE)
_UNITTEST_RAN = re.compile(r"^Ran (\d+) tests? in [\d.]+s$", re.MULTILINE)
_UNITTEST_END = re.compile(r"^(OK|FAILED|NO TESTS RAN)(?: \(([^)]*)\))?\s*$", re.MULTILINE)
_TAP = re.compile(r"^(?:#|ℹ)\s*(tests|pass|fail|cancelled|skipped|todo)\s+(\d+)\s*$", re.MULTILINE)
_JEST = re.compile(r"^\s*Tests:\s+(.*?)(\d+)\s+total\s*$", re.MULTILINE)
_VITEST = re.compile(r"^\s*Tests\s+(.*?)\((\d+)\)\s*$", re.MULTILINE)
_GO_OK = re.compile(r"^ok\s+\S+\s+(?:[\d.]+s|\(cached\))(?!.*no test files)", re.MULTILINE)
_GO_FAIL = re.compile(r"^(?:FAIL\s+\S+|--- FAIL: )", re.MULTILINE)
_CARGO = re.compile(r"^test result: (ok|FAILED)\. (\d+) passed; (\d+) failed; (\d+) ignored; \d+ measured; "
                    r"(\d+) filtered out", re.MULTILINE)
_DOCTEST = re.compile(r"^(\d+) passed and (\d+) failed\.$", re.MULTILINE)
_PLAIN = re.compile(r"^\s*(?:[A-Za-z]+:\s*)?(\d+) passed, (\d+) failed(?:, (\d+) skipped)?\s*$", re.MULTILINE)
# Loose shapes of a summary, for spotting one inside literal text a command prints.
LOOKS_LIKE_SUMMARY = re.compile(
    r"\d+\s+(?:passed|failed|tests?\b|errors?)|\bRan\s+\d+\s+tests?|^\s*OK\s*$|#\s*(?:pass|fail|tests)\s+\d+"
    r"|test result:|\bPASS\b|\bok\s+\S+\s+[\d.]+s|All\s+tests\s+passed|测试通过|通过", re.IGNORECASE | re.MULTILINE)


def _pytest(text: str) -> Tally:
    tally = Tally()
    for match in _PYTEST_LINE.finditer(text):
        counts = {k: 0 for k in ("passed", "failed", "error", "skipped", "deselected")}
        for number, word in re.findall(_COUNT, match.group(1)):
            key = "error" if word.startswith("error") else word
            if key in counts:
                counts[key] += int(number)
        tally = tally + Tally(True, counts["passed"], counts["failed"], counts["error"], counts["skipped"],
                              counts["deselected"])
    if _PYTEST_NONE.search(text):
        tally = tally + Tally(True)
    return tally


def _unittest(text: str) -> Tally:
    ran = [int(m.group(1)) for m in _UNITTEST_RAN.finditer(text)]
    if not ran:
        return Tally()
    failed = errors = skipped = 0
    for match in _UNITTEST_END.finditer(text):
        detail = match.group(2) or ""
        failed += sum(int(n) for n in re.findall(r"failures=(\d+)", detail))
        errors += sum(int(n) for n in re.findall(r"errors=(\d+)", detail))
        errors += sum(int(n) for n in re.findall(r"unexpected successes=(\d+)", detail))
        skipped += sum(int(n) for n in re.findall(r"skipped=(\d+)", detail))
    total = sum(ran)
    return Tally(True, max(total - failed - errors - skipped, 0), failed, errors, skipped)


def _tap(text: str) -> Tally:
    values: dict[str, int] = {}
    for key, number in _TAP.findall(text):
        values[key] = values.get(key, 0) + int(number)
    if "pass" not in values and "fail" not in values:
        return Tally()
    return Tally(True, values.get("pass", 0), values.get("fail", 0) + values.get("cancelled", 0), 0,
                 values.get("skipped", 0) + values.get("todo", 0))


def _counted(words: str) -> dict[str, int]:
    found: dict[str, int] = {}
    for number, word in re.findall(r"(\d+)\s+(passed|failed|skipped|todo|pending)", words):
        found[word] = found.get(word, 0) + int(number)
    return found


def _jest_vitest(text: str) -> Tally:
    tally = Tally()
    for pattern in (_JEST, _VITEST):
        for match in pattern.finditer(text):
            counts = _counted(match.group(1))
            tally = tally + Tally(True, counts.get("passed", 0), counts.get("failed", 0), 0,
                                  counts.get("skipped", 0) + counts.get("todo", 0))
    return tally


def _go(text: str) -> Tally:
    passed = len(_GO_OK.findall(text))
    failed = len(_GO_FAIL.findall(text))
    return Tally(bool(passed or failed), passed, failed)


def _cargo(text: str) -> Tally:
    tally = Tally()
    for status, passed, failed, ignored, filtered in _CARGO.findall(text):
        tally = tally + Tally(True, int(passed), int(failed) + (1 if status == "FAILED" and not int(failed) else 0),
                              0, int(ignored), int(filtered))
    return tally


def _plain(text: str) -> Tally:
    tally = Tally()
    for passed, failed, skipped in _PLAIN.findall(text):
        tally = tally + Tally(True, int(passed), int(failed), 0, int(skipped or 0))
    return tally


def _doctest(text: str) -> Tally:
    tally = Tally()
    for passed, failed in _DOCTEST.findall(text):
        tally = tally + Tally(True, int(passed), int(failed))
    return tally


def parse_summary(text: str) -> Tally:
    """Every test summary recognised in ``text``, added up."""
    tally = Tally()
    for reader in (_pytest, _unittest, _tap, _jest_vitest, _go, _cargo, _doctest):
        tally = tally + reader(text)
    if not tally.found:
        tally = _plain(text)
    return tally


# A compiler's own error lines, and make's note that it ignored a failed recipe: the build failed
# whatever exit status the line reports.
COMPILE_ERROR = re.compile(r"^[^\s:]+:\d+(?::\d+)?: (?:fatal )?error[: ]|^make(?:\[\d+\])?: \[[^\]]*\] Error \d+ \(ignored\)"
                           r"|^error(?:\[E\d+\])?: |^\S+\.java:\d+: error:", re.MULTILINE)
