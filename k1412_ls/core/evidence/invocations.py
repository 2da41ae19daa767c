"""What a shell command line runs, as far as the evidence gate cares (on the shared shell model).

Each simple command of the line (``k1412_ls.shell``) becomes an
:class:`Invocation` with a role:

- ``print``: only prints text the model wrote (``echo``, ``printf``, ``true``,
  ``:``, ``cat <<EOF``, a ``python3 -c``/here-document program that only
  prints): it proves nothing;
- ``probe``: looks without running project code (``ls``, ``cat``, ``grep``,
  ``git status``, ``--version``): an inspection;
- ``setup``: installs (``pip install``, ``npm ci``);
- ``vcs``: changes version control state (``git add``); ``commit``: ``git commit``;
- ``test``: a test runner, with the :class:`~k1412_ls.text.runner_summaries.Suite` it covers;
- ``build``: a compiler or build tool, with the sources it compiles;
- ``inline``: a program given inline (``python3 -c``, ``node -e``, a here-document)
  that does more than print;
- ``run``: everything else, the executions that prove or disprove the work.

``subjects`` say what an invocation exercises (``file:app.py``,
``prog:npm test``) so a later success of the same work can resolve an
earlier failure; ``literals`` are the texts the line prints verbatim, which
can never carry proof (a test summary inside them makes the line's
summaries untrustworthy).
"""

from __future__ import annotations

import re
from dataclasses import dataclass, replace
from functools import lru_cache

from k1412_ls.core.evidence.inline_code import (
    JS_PRINT_ONLY,
    imported_files,
    python_exercises,
    python_prints_only,
)
from k1412_ls.core.evidence.placement import (
    RUNNER_DIR_OPTIONS,
    make_positionals,
    moved,
    runner_dir,
    with_environment,
    without_dir_options,
)
from k1412_ls.core.evidence.syntax_checks import SHELL_NAMES, syntax_check_only
from k1412_ls.core.evidence.test_binaries import built_test_program, runs_test_program
from k1412_ls.shell import MAX_CACHED_CHARS, Simple, git_subcommand, parse_line, program_name, strip_wrappers
from k1412_ls.shell.words import wrapper_chdir
from k1412_ls.text.runner_summaries import (
    LOOKS_LIKE_SUMMARY,
    SCRIPT_TEST_WORDS,
    Suite,
    cargo_suite,
    go_suite,
    js_suite,
    node_suite,
    pytest_suite,
    unittest_suite,
)

PRINTERS = frozenset({"echo", "printf", "true", "false", ":", "yes", "print"})
PROBE_PROGRAMS: frozenset[str] = frozenset({
    "ls", "ll", "dir", "cat", "bat", "head", "tail", "less", "more", "grep", "egrep", "fgrep", "rg", "ag", "ack",
    "find", "fd", "which", "whereis", "type", "command", "test", "[", "[[", "wc", "file", "stat", "du", "df",
    "tree", "pwd", "env", "printenv", "diff", "cmp", "sha256sum", "md5sum", "realpath", "readlink", "basename",
    "dirname", "uname", "whoami", "id", "date", "hostname", "sort", "uniq", "cut", "awk", "sed", "jq", "xxd",
    "od", "hexdump", "nl", "column", "tr", "cd", "export", "set", "source", ".", "sleep", "ps", "pgrep",
    "lsof", "free", "nproc", "locale", "tee", "wait", "exit", "return", "unset", "declare", "local", "shift",
    "read", "pushd", "popd", "tac", "fold", "strings", "nm", "objdump", "ldd", "history", "clear", "chmod",
    "mkdir", "touch", "cp", "mv", "rm", "ln", "rmdir", "tar", "zip", "unzip", "gzip", "gunzip", "kill", "pkill",
    "killall", "curl", "wget",
})
# Programs whose run changes files but proves nothing about code.
SETUP_WORDS: frozenset[str] = frozenset({"install", "add", "ci", "sync", "uninstall", "remove", "upgrade",
                                          "update", "download", "fetch", "restore", "init", "venv", "i"})
SETUP_PROGRAMS: frozenset[str] = frozenset({"pip", "pip3", "pipx", "npm", "yarn", "pnpm", "bun", "uv", "poetry",
                                            "cargo", "go", "gem", "bundle", "apt", "apt-get", "brew", "conda",
                                            "mamba", "composer", "dotnet", "virtualenv"})
INTERPRETERS: frozenset[str] = frozenset({
    "python", "python3", "python2", "pypy", "pypy3", "node", "nodejs", "deno", "bun", "ruby", "perl", "php",
    "bash", "sh", "zsh", "dash", "fish", "lua", "Rscript", "julia", "tsx", "ts-node", "elixir", "swift",
    "java", "groovy", "kotlin", "scala", "dotnet-script",
})
INLINE_FLAGS = frozenset({"-c", "-e", "--eval", "-p", "--print", "-r", "-E"})
# git subcommands that only show the repository (its history, objects, refs, files): reads, never changes.
GIT_READERS: frozenset[str] = frozenset({
    "status", "diff", "log", "show", "blame", "branch", "rev-parse", "ls-files", "remote", "tag", "describe",
    "shortlog", "grep", "config", "rev-list", "cat-file", "ls-tree", "count-objects", "name-rev", "merge-base",
    "for-each-ref", "show-ref", "whatchanged", "cherry", "range-diff", "show-branch"})
SUBCOMMAND_TOOLS: frozenset[str] = frozenset({
    "npm", "yarn", "pnpm", "bun", "cargo", "go", "make", "just", "uv", "poetry", "dotnet", "mvn", "gradle",
    "./gradlew", "gradlew", "docker", "docker-compose", "kubectl", "deno", "hatch", "tox", "nox", "rake",
    "bundle", "mix", "zig", "swift", "stack", "cabal",
})
COMPILERS = frozenset({"gcc", "g++", "cc", "c++", "clang", "clang++", "tcc", "javac", "rustc", "tsc", "gfortran",
                       "nvcc", "zig"})
C_SOURCES = re.compile(r"\.(?:c|cc|cpp|cxx|c\+\+|m|mm|java|rs|ts|tsx|f90|f|cu|zig|s|S)$")
MAKE_TEST_TARGETS = frozenset({"test", "tests", "check", "ci"})
UNKNOWN_PRINTED = "\0unknown"  # a printed expansion whose text cannot be known before the line runs
_VERSIONED = re.compile(r"^(python|pypy|ruby|perl|php|node)[0-9.]*$")
TEST_FILE = re.compile(r"(?:^|/)(?:(?:test_[^/]*|[^/]*_test|[^/]*\.test|[^/]*\.spec|tests?)\.(?:py|js|mjs|cjs|ts)"
                       r"|test_[^/.]*|[^/.]*_test|tests?)$")


@dataclass(frozen=True)
class Invocation:
    """One simple command of a line, classified."""

    argv: tuple[str, ...]
    program: str
    role: str
    reaches: bool
    subjects: frozenset[str]
    suite: Suite | None = None
    sources: tuple[str, ...] = ()  # what a build compiles
    outputs: tuple[str, ...] = ()  # what a build produces (-o)
    cwd: str = "."                 # where it ran, relative to the line's working directory (``cd`` followed)
    silenced: bool = False         # its standard output went to /dev/null
    lenient: bool = False          # a build told to ignore errors (``make -i``): its status proves nothing
    background: bool = False       # started with ``&`` (a server the line later stops on purpose)

    @property
    def proves_execution(self) -> bool:
        return self.role in ("run", "test", "build", "inline")


@dataclass(frozen=True)
class CommandShape:
    """What a command line runs: its invocations, subjects, mentioned files and overall role."""

    command: str
    subjects: frozenset[str]
    mentions: frozenset[str]
    role: str  # "run" | "test" | "build" | "inline" | "commit" | "setup" | "vcs" | "probe" | "print"
    invocations: tuple[Invocation, ...] = ()
    literals: tuple[str, ...] = ()
    parsed: bool = True
    tampered: str | None = None
    writes_to: tuple[str, ...] = ()
    environment: tuple[tuple[str, str | None], ...] = ()  # variables the line assigns or exports (None: not literal)
    inline_code: tuple[str, ...] = ()  # programs given inline to Python (``-c``, here-documents)

    @property
    def is_run(self) -> bool:
        """Whether the command runs project code (not a probe, an install or printed text)."""
        return self.role in ("run", "test", "build", "inline")

    @property
    def tests(self) -> tuple[Invocation, ...]:
        return tuple(i for i in self.invocations if i.role == "test")

    @property
    def builds(self) -> tuple[Invocation, ...]:
        return tuple(i for i in self.invocations if i.role == "build")

    @property
    def ends_with_test(self) -> bool:
        """Whether the line's last program is a test run (trailing ``echo`` aside) that the line waited for:
        whatever the line changed, it changed before that run began or while it ran."""
        if not self.parsed or self.tampered is not None:
            return False
        rest = list(self.invocations)
        while rest and rest[-1].role == "print" and not self.writes_to:  # ``echo x > calc.py`` is a change
            rest.pop()
        return bool(rest) and rest[-1].role == "test" and not rest[-1].background

    @property
    def faked_summary(self) -> bool:
        """Whether text the line prints itself could be a test summary (then its summaries prove nothing)."""
        return any(text == UNKNOWN_PRINTED or LOOKS_LIKE_SUMMARY.search(text) for text in self.literals)

    @property
    def trusted_status(self) -> bool:
        """Whether the line's exit status means what bash says it means."""
        return self.parsed and self.tampered is None


def _program(word: str) -> str:
    base = program_name(word)
    versioned = _VERSIONED.match(base)
    return versioned.group(1) if versioned else base


def _inline_program(program: str, args: list[str], simple: Simple) -> tuple[str, str] | None:
    """(language, code) when an interpreter runs code given inline (``-c``/``-e``/stdin), else None."""
    for index, arg in enumerate(args):
        if arg in INLINE_FLAGS or (arg.startswith("-") and not arg.startswith("--") and arg[-1:] in "ce"
                                   and len(arg) <= 4 and program != "java"):
            return program, args[index + 1] if index + 1 < len(args) else ""
        if arg == "-":
            break
        if not arg.startswith("-"):
            return None
    if simple.heredoc is not None:
        return program, simple.heredoc
    if simple.herestring is not None:
        return program, simple.herestring
    if simple.stdin:
        return program, ""  # code from a pipe: unknown
    return None


def _prints_only(language: str, code: str) -> bool:
    if not code.strip():
        return False
    if language.startswith(("python", "pypy")):
        return python_prints_only(code)
    if language in ("node", "nodejs", "deno", "bun"):
        return bool(JS_PRINT_ONLY.match(code))
    if language in ("sh", "bash", "zsh", "dash"):
        inner = command_shape(code)
        return inner.role == "print"
    return False


def _test_suite(program: str, args: list[str]) -> Suite | None:
    if program in RUNNER_DIR_OPTIONS and program not in ("make", "just"):
        args = without_dir_options(program, args)
    positionals = [a for a in args if not a.startswith("-")]
    if program in ("pytest", "py.test"):
        return pytest_suite(args)
    if program in ("jest", "vitest", "mocha", "ava", "tap"):
        return js_suite(program, args)
    if program == "node" and "--test" in args:
        return node_suite([a for a in args if a != "--test"])
    if program == "go" and positionals[:1] == ["test"]:
        return go_suite(args[args.index("test") + 1:])
    if program == "cargo" and positionals[:1] in (["test"], ["nextest"]):
        rest = args[args.index(positionals[0]) + 1:]
        if rest[:1] == ["run"]:
            rest = rest[1:]
        return cargo_suite(rest)
    if program in ("npm", "yarn", "pnpm", "bun"):
        via_run = positionals[:1] in (["run"], ["run-script"])
        words = positionals[1:] if via_run else positionals
        if words[:1] and words[0] in (SCRIPT_TEST_WORDS if via_run else {"test", "t", "tst"}):
            if program == "bun" and words[0] == "test":
                return js_suite("bun", args[args.index("test") + 1:])
            extra = [w for w in args[args.index(words[0]) + 1:] if w != "--"]
            return Suite(f"script:{program} {words[0]}", tuple(x for x in extra if not x.startswith("-")),
                         "arguments narrow the script" if extra else None)
    if program in ("make", "just"):
        positionals = make_positionals(args)
    if program in ("make", "just") and positionals[:1] and positionals[0] in MAKE_TEST_TARGETS:
        return Suite(f"script:{program} {positionals[0]}")
    if program in ("tox", "nox", "ctest", "mvn", "gradle", "./gradlew", "gradlew", "rake"):
        if program in ("mvn", "gradle", "./gradlew", "gradlew") and not any(p in ("test", "check", "verify")
                                                                           for p in positionals):
            return None
        return Suite(f"script:{program}", (), "-k/-e/-R filters" if any(a in ("-e", "-R", "-k") for a in args)
                     and program in ("tox", "ctest") else None)
    return None


def classify(simple: Simple) -> Invocation:
    """The role and subjects of one simple command."""
    words = strip_wrappers(simple.argv)
    if not words or not words[0]:
        return Invocation(tuple(words), "", "probe", simple.reaches, frozenset())
    program = _program(words[0])
    rest = words[1:]
    reach = simple.reaches

    def make(role: str, subjects: set[str] | frozenset[str] = frozenset(), **kw: object) -> Invocation:
        return Invocation(tuple(words), program, role, reach, frozenset(subjects), **kw)  # type: ignore[arg-type]

    if program in PRINTERS:
        return make("print")
    if program == "cat" and not [a for a in rest if not a.startswith("-")] and (simple.heredoc is not None
                                                                                 or simple.herestring is not None):
        return make("print")
    if any(w in ("--version", "-V", "--help", "-h", "-version") for w in rest[:2]) and len(rest) <= 2:
        return make("probe")
    if program in ("python", "python3", "python2", "pypy", "pypy3"):
        module = _module(rest)
        if module is not None:
            name, args = module
            if name == "doctest":
                return make("test", {"prog:doctest"}, suite=Suite("doctest", tuple(a for a in args
                                                                                   if not a.startswith("-"))))
            if name in ("pytest", "py.test"):
                return make("test", {"prog:pytest"}, suite=pytest_suite(args))
            if name == "unittest":
                return make("test", {"prog:unittest"}, suite=unittest_suite(args))
            if name in ("pip", "venv", "ensurepip", "virtualenv"):
                return make("setup", {f"prog:{name}"})
            if name in ("py_compile", "compileall"):
                return make("probe", {f"prog:{name}"})
            if name in ("timeit", "cProfile", "profile", "trace"):
                return make("run", {f"prog:{name}"})
            return make("run", {f"prog:{name}"})
    if program in INTERPRETERS:
        inline = _inline_program(program, rest, simple)
        if inline is not None and program in SHELL_NAMES and inline[1] and not simple.stdin:
            return make("wrapper")  # its commands are parsed and classified on their own
        if inline is not None:
            language, code = inline
            if _prints_only(language, code):
                return make("print")
            if language.startswith(("python", "pypy")) and code.strip() and not python_exercises(code):
                return make("probe")  # imports and prints names: it never runs the code it names
            return make("inline", {f"inline:{program}", *(f"file:{f}" for f in imported_files(language, code))})
        if program in ("node", "nodejs") and any(a in ("--check", "-c") for a in rest):
            return make("probe")  # a syntax check runs nothing
        if syntax_check_only(program, rest):
            return make("probe")  # ``sh -n``, ``perl -c``, ``ruby -c``, ``php -l``: parsed, never run
        if program == "node" and "--test" in rest:
            return make("test", {"prog:node --test"}, suite=_test_suite("node", rest))
        script = _script(rest)
        if script is None:
            return make("probe")
        if TEST_FILE.search(script):
            return make("test", {f"file:{script}"}, suite=Suite(f"file:{script}", (script,)))
        return make("run", {f"file:{script.removeprefix('./')}"})
    suite = _test_suite(program, rest)
    if suite is not None:
        label = suite.family if suite.family.startswith("script:") else program
        return make("test", {f"prog:{label.removeprefix('script:')}"}, suite=suite)
    if program == "git":
        sub = git_subcommand(rest)
        if sub == "commit":
            return make("commit", {"prog:git commit"})
        if sub in GIT_READERS:
            return make("probe", {f"prog:git {sub}"})
        return make("vcs", {f"prog:git {sub}"})
    if program in COMPILERS or (program in ("go", "cargo") and rest[:1] == ["build"]) or (
            program == "make" and not [p for p in rest if not p.startswith("-") and p not in MAKE_TEST_TARGETS]) \
            or program == "cmake":
        sources = tuple(a for a in rest if C_SOURCES.search(a))
        outputs = tuple(rest[i + 1] for i, a in enumerate(rest[:-1]) if a == "-o")
        lenient = program == "make" and any(a in ("-i", "--ignore-errors") or (a.startswith("-") and not a.startswith(
            "--") and "i" in a[1:] and len(a) <= 4) for a in rest)
        return make("build", {f"build:{program}", *(f"file:{s}" for s in sources)}, sources=sources,
                    outputs=outputs, lenient=lenient)
    positional = [w for w in rest if not w.startswith("-")]
    if program in SETUP_PROGRAMS and positional and positional[0] in SETUP_WORDS:
        return make("setup", {f"prog:{program} {positional[0]}"})
    if program in PROBE_PROGRAMS:
        return make("probe", {f"prog:{program}"})
    if program.startswith("./") or "/" in program:
        path = program.removeprefix("./")
        if TEST_FILE.search(path):
            return make("test", {f"file:{path}"}, suite=Suite(f"file:{path}", (path,)))
        return make("run", {f"file:{path}"})
    if program in SUBCOMMAND_TOOLS:
        sub = positional[0] if positional else ""
        if program in ("npm", "yarn", "pnpm", "bun") and sub == "run" and len(positional) > 1:
            sub = positional[1]
        return make("run", {f"prog:{program} {sub}".rstrip()})
    return make("run", {f"prog:{program}"})


def classify_argv(argv: list[str]) -> Invocation:
    """Classify a command known only by its arguments (an observed program)."""
    return classify(Simple(tuple(argv), " ".join(argv), False))


def _module(args: list[str]) -> tuple[str, list[str]] | None:
    for index, word in enumerate(args):
        if word == "-m" and index + 1 < len(args):
            return args[index + 1], args[index + 2:]
        if word.startswith("-m") and len(word) > 2:
            return word[2:], args[index + 1:]
        if word in ("-W", "-X"):
            continue
        if not word.startswith("-"):
            return None
    return None


def _script(args: list[str]) -> str | None:
    skip = False
    for word in args:
        if skip:
            skip = False
            continue
        if word in ("-W", "-X", "-r", "--require", "--import", "-I", "-M"):
            skip = True
            continue
        if word.startswith("-"):
            continue
        return word
    return None


_SUBSTITUTION = re.compile(r"\$\(|`")


def _literals(simple: Simple, invocation: Invocation, assigned: tuple[str, ...]) -> list[str]:
    """Texts a printing command prints verbatim; a printed expansion of something the line computed or
    assigned (``echo "$(python3 fake.py)"``, ``S='3 passed'; echo $S``) counts as unknown text."""
    texts: list[str] = []
    if invocation.role == "print" and simple.dynamic:
        names = re.findall(r"\$\{?([A-Za-z_][A-Za-z0-9_]*)", simple.text)
        if _SUBSTITUTION.search(simple.text) or set(names) & set(assigned):
            texts.append(UNKNOWN_PRINTED)
    if invocation.role == "print":
        texts.extend(w for w in invocation.argv[1:] if w)
        if simple.heredoc:
            texts.append(simple.heredoc)
        if simple.herestring:
            texts.append(simple.herestring)
        texts.extend(w for w in invocation.argv if w and len(w) > 20)  # code of a print-only program
    return texts


def command_shape(command: str) -> CommandShape:
    """Invocations, subjects, mentioned paths and overall role of a shell command line (short lines cached)."""
    if len(command) <= MAX_CACHED_CHARS:
        return _shape_cached(command)
    return _shape(command)


@lru_cache(maxsize=1024)
def _shape_cached(command: str) -> CommandShape:
    return _shape(command)


def _shape(command: str) -> CommandShape:
    line = parse_line(command)
    invocations: list[Invocation] = []
    literals: list[str] = []
    mentions: set[str] = set()
    writes: list[str] = []
    cwds: dict[int, str] = {0: "."}  # the working directory per nesting level (``bash -c 'cd x && …'``)
    test_programs: dict[str, tuple[str, ...]] = {}  # test programs a compiler built earlier in the line
    environment: list[tuple[str, str | None]] = list(line.values)
    inline_code: list[str] = []
    for simple in line.commands:
        for level in [k for k in cwds if k > simple.nesting]:
            del cwds[level]
        cwd = cwds[max(k for k in cwds if k <= simple.nesting)]
        invocation = _test_program_run(classify(simple), test_programs)
        where = moved(cwd, wrapper_chdir(simple.argv) if invocation.role == "test" else None)
        if invocation.role == "test" and invocation.suite is not None:
            where = moved(where, runner_dir(invocation.program, list(invocation.argv[1:])))
            invocation = replace(invocation, suite=with_environment(invocation.suite, simple, line.values))
        if where != "." or simple.silenced or simple.background:
            invocation = replace(invocation, cwd=where, silenced=simple.silenced, background=simple.background)
        if invocation.program in ("cd", "pushd") and len(invocation.argv) <= 2:
            target = invocation.argv[1] if len(invocation.argv) == 2 else ""
            cwds[simple.nesting] = moved(cwd, target if target and not target.startswith(("-", "~")) else "")
        invocations.append(invocation)
        environment.extend(_prefix_assignments(simple))
        if invocation.program.startswith(("python", "pypy")):
            inline = _inline_program(invocation.program, list(invocation.argv[1:]), simple)
            if inline is not None and inline[1]:
                inline_code.append(inline[1])
        literals.extend(_literals(simple, invocation, line.assignments))
        mentions.update(w.removeprefix("./") for w in simple.argv if ("." in w or "/" in w) and " " not in w)
        writes.extend(simple.writes_to)
    mentions.update(w.removeprefix("./") for w in writes)
    roles = {i.role for i in invocations}
    role = next((r for r in ("test", "build", "inline", "run", "commit", "setup", "vcs", "probe") if r in roles),
                "print")
    subjects = frozenset(s for i in invocations for s in i.subjects)
    return CommandShape(command, subjects, frozenset(mentions), role, tuple(invocations), tuple(literals),
                        line.parsed, line.tampered, tuple(writes), tuple(environment), tuple(inline_code))


def _prefix_assignments(simple: Simple) -> list[tuple[str, str | None]]:
    """``VAR=value`` words in front of a command (``PYTHONPATH=build pytest``, ``env NODE_PATH=x node``)."""
    words = simple.argv[:len(simple.argv) - len(strip_wrappers(simple.argv))]
    found: list[tuple[str, str | None]] = []
    for index, word in enumerate(words):
        name, eq, value = word.partition("=")
        if eq and re.fullmatch(r"[A-Za-z_][A-Za-z0-9_]*", name):
            literal = simple.words[index] is not None
            found.append((name, value if literal else None))
    return found


def _test_program_run(invocation: Invocation, built: dict[str, tuple[str, ...]]) -> Invocation:
    """Remember a test program a compiler builds; its run later in the line is a test run of its sources."""
    made = built_test_program(invocation.program, list(invocation.argv[1:]))
    if made is not None:
        built[made[0]] = made[1]
        return replace(invocation, role="build", suite=None)
    sources = runs_test_program(invocation.argv[0], built) if invocation.role == "run" and invocation.argv else None
    if sources is None:
        return invocation
    return replace(invocation, role="test", subjects=frozenset({"prog:test program", *(f"file:{s}" for s in sources)}),
                   suite=Suite("test-program", ()))


def same_work(failed: CommandShape, later: CommandShape) -> bool:
    """Whether ``later`` re-runs what ``failed`` ran: the same command line or a shared subject."""
    if " ".join(failed.command.split()) == " ".join(later.command.split()):
        return True
    return bool({s for s in failed.subjects if not s.startswith(("inline:", "build:"))} & later.subjects)
