"""Test programs a compiler builds in the same command line: ``rustc --test lib.rs -o t && ./t``.

A compiler told to build tests (``rustc --test``, ``go test -c``) makes a program whose run *is* the test run:
it prints the runner's own summary (``test result: ok. 2 passed``) and its status is the suite's. Judged by
its name alone, ``./t`` would be just a program; this module remembers what such a build produced so that
running it later in the line counts as running the tests of the sources it was built from.
"""

from __future__ import annotations

from pathlib import PurePosixPath


def built_test_program(program: str, args: list[str]) -> tuple[str, tuple[str, ...]] | None:
    """``(program path, sources)`` when ``program args`` builds a test program, else None."""
    if program == "rustc" and "--test" in args:
        sources = tuple(a for a in args if a.endswith(".rs"))
        output = _value(args, "-o")
        if output is None and sources:
            output = PurePosixPath(sources[0]).stem
        return (_normal(output), sources) if output else None
    if program == "go" and args[:1] == ["test"] and "-c" in args:
        output = _value(args, "-o")
        return (_normal(output), ()) if output else None
    return None


def runs_test_program(program_path: str, built: dict[str, tuple[str, ...]]) -> tuple[str, ...] | None:
    """The sources of the test program ``program_path`` runs, when this line built it; else None."""
    return built.get(_normal(program_path))


def _value(args: list[str], option: str) -> str | None:
    for index, arg in enumerate(args[:-1]):
        if arg == option:
            return args[index + 1]
    return next((a[len(option):] for a in args if a.startswith(option) and len(a) > len(option)), None)


def _normal(path: str) -> str:
    return str(PurePosixPath(path.removeprefix("./")))


__all__ = ["built_test_program", "runs_test_program"]
