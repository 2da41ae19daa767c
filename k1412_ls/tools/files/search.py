"""search_files: literal or regex search over workspace text files.

ripgrep is used when installed; otherwise a pure-Python walker gives the
same results: matches sorted by path (component by component, like
``rg --sort path``) then line, ``.gitignore`` respected (see
:mod:`k1412_ls.tools.files.ignore`), hidden files searched, ``.git`` and symlinks
skipped, binary files and files over 50 MiB skipped, UTF-8 BOMs stripped and
UTF-16 files (with a BOM) transcoded, long lines cut to
:data:`MAX_TEXT_CHARS` characters with a marker. The query is always passed
after ``-e`` so a query such as ``--pre=sh`` is never an option.
"""

from __future__ import annotations

import os
import re
import subprocess
import threading
import time
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from pathlib import Path

from pydantic import BaseModel, ConfigDict, Field, field_validator

from k1412_ls.tools.errors import ToolError
from k1412_ls.tools.files.documents import WRITE_TEMP_GLOB, open_regular, read_fd
from k1412_ls.tools.files.ignore import GlobFilter, walk_files
from k1412_ls.tools.registry import Tool, ToolContext, ToolResult
from k1412_ls.tools.sandbox.reader_sandbox import ReaderProcess, SandboxedProcess, start_reader
from k1412_ls.tools.sandbox.trusted import trusted_program

MAX_TEXT_CHARS = 300
MAX_RESULTS = 1000
TRUNCATION_MARKER = " …[line truncated]"
MAX_FILE_BYTES = 50 * 1024 * 1024
RG_MAX_COLUMNS = 2000  # bytes; always more than MAX_TEXT_CHARS characters
SEARCH_TIMEOUT_S = 60.0
_RG_PREVIEW_TAIL = re.compile(rb" \[\.\.\. (?:\d+ more match(?:es)?|omitted end of long line)\]$")


class SearchFilesArgs(BaseModel):
    """Arguments of search_files."""

    model_config = ConfigDict(extra="forbid")
    query: str = Field(min_length=1, description="Text to find (a regular expression when regex is true).")
    path: str = Field(default=".", description="Directory or file to search, relative to the workspace root.")
    regex: bool = Field(default=False, description="Treat query as a regular expression.")
    glob: str | None = Field(
        default=None,
        description="Gitignore-style file filter relative to the workspace root, e.g. '*.py'; '!' excludes.",
    )
    max_results: int = Field(default=100, ge=1, description=f"Maximum matching lines to return (at most {MAX_RESULTS}).")

    @field_validator("max_results")
    @classmethod
    def _cap(cls, value: int) -> int:
        # A larger request is served at the cap instead of failing the call.
        return min(value, MAX_RESULTS)


@dataclass(frozen=True)
class Match:
    """One matching line: workspace-relative path, 1-based line and character column, display text."""

    path: str
    line: int
    column: int
    text: str

    def as_dict(self) -> dict[str, str | int]:
        # dataclasses.asdict deep-copies every field: 30x slower on 100 matches.
        return {"path": self.path, "line": self.line, "column": self.column, "text": self.text}


def display_text(text: str, cut: bool = False) -> str:
    """The line as shown to the model: at most MAX_TEXT_CHARS characters plus a marker when cut."""
    if cut or len(text) > MAX_TEXT_CHARS:
        return text[:MAX_TEXT_CHARS] + TRUNCATION_MARKER
    return text


def sort_key(match: Match) -> tuple[list[str], int]:
    return match.path.split("/"), match.line


# --- Python backend ------------------------------------------------------------------------------


def _decode(data: bytes) -> str | None:
    """File bytes as text the way ripgrep sees them; None for binary files."""
    if data.startswith((b"\xff\xfe", b"\xfe\xff")):
        try:
            data = data.decode("utf-16").encode("utf-8")
        except UnicodeDecodeError:
            return None
    elif data.startswith(b"\xef\xbb\xbf"):
        data = data[3:]
    if b"\x00" in data:
        return None
    return data.decode("utf-8", errors="replace")


def _search_text(rel: str, text: str, find: re.Pattern[str], limit: int, out: list[Match]) -> None:
    for number, line in enumerate(text.split("\n"), start=1):
        if len(out) >= limit:
            return
        if line.endswith("\r"):
            line = line[:-1]
        found = find.search(line)
        if found is not None:
            out.append(Match(rel, number, found.start() + 1, display_text(line)))


def python_search(root: Path, start: Path, query: str, regex: bool, glob: str | None, limit: int,
                  cancel: threading.Event | None = None) -> list[Match]:
    """Search without ripgrep; returns up to ``limit`` matches in path/line order."""
    try:
        find = re.compile(query if regex else re.escape(query))
    except re.error as exc:
        raise ToolError(f"The regex is invalid ({exc}); fix it or pass regex=false to search for literal text.") from None
    if start.is_file():
        files: Iterable[Path] = [start]
    else:
        files = (entry.path for entry in walk_files(root, start, GlobFilter(glob)))
    out: list[Match] = []
    for path in files:
        if len(out) >= limit or (cancel is not None and cancel.is_set()):
            break
        try:
            # O_NONBLOCK + regular-file check: a file swapped for a FIFO or device is skipped, not waited on.
            with open_regular(path) as (fd, info):
                if info.st_size > MAX_FILE_BYTES:
                    continue
                data = read_fd(fd, MAX_FILE_BYTES)
        except (OSError, ToolError):
            continue
        text = _decode(data)
        if text is not None:
            _search_text(path.relative_to(root).as_posix(), text, find, limit, out)
    return out


# --- ripgrep backend -----------------------------------------------------------------------------

# Wraps a command line in the commands' sandbox: (argv, environment overrides).
Confine = Callable[[list[str]], tuple[list[str], dict[str, str]]]


def rg_command(rg: str, root: Path, start: Path, query: str, regex: bool, glob: str | None) -> list[str]:
    """The ripgrep command line (run with cwd=root): no config, no symlinks, .gitignore only."""
    command = [
        rg, "--no-config", "--null", "--line-number", "--column", "--no-heading", "--with-filename",
        "--color", "never", "--max-columns", str(RG_MAX_COLUMNS), "--max-columns-preview", "--hidden",
        "--no-require-git", "--no-ignore-global", "--no-ignore-dot", "--no-ignore-exclude",
        "--no-ignore-parent", "--sort", "path", "--no-messages", "--max-filesize", "50M",
        "--glob", "!.git",
    ]
    if glob:
        command += ["--glob", glob]
    command += ["--glob", f"!{WRITE_TEMP_GLOB}"]  # last, so no user glob can bring them back
    if not regex:
        command.append("--fixed-strings")
    if start != root and (root / ".gitignore").is_file():
        command += ["--ignore-file", str(root / ".gitignore")]
    rel = "." if start == root else start.relative_to(root).as_posix()
    return [*command, "-e", query, "--", rel]


def _parse_record(path_raw: bytes, rest: bytes, paths: dict[bytes, str] | None = None) -> Match | None:
    """One ``path NUL line:column:text`` record; ``paths`` caches decoded paths (a file has many matches)."""
    try:
        line_raw, column_raw, text = rest.split(b":", 2)
        line, column = int(line_raw), int(column_raw)
    except ValueError:
        return None
    cut = len(text) > RG_MAX_COLUMNS and _RG_PREVIEW_TAIL.search(text) is not None
    if cut:
        text = _RG_PREVIEW_TAIL.sub(b"", text)
    elif text.endswith(b"\r"):
        text = text[:-1]
    if text.isascii():  # one byte per character: the byte column is the character column
        char_column = column
    else:
        prefix = text[: column - 1].decode("utf-8", errors="replace")
        char_column = len(prefix) + 1 + max(0, column - 1 - len(text))
    rel = paths.get(path_raw) if paths is not None else None
    if rel is None:
        rel = os.path.normpath(os.fsdecode(path_raw)).replace(os.sep, "/")
        if paths is not None:
            paths[path_raw] = rel
    return Match(rel, line, char_column, display_text(text.decode("utf-8", errors="replace"), cut))


def _collect(proc: ReaderProcess, limit: int,
             cancel: threading.Event | None) -> tuple[list[Match], int, str, list[str]]:
    """Read ripgrep's records until ``limit`` matches or its end: matches, exit code, stderr, why it was stopped."""
    done = threading.Event()
    stopped: list[str] = []

    def watchdog() -> None:
        deadline = time.monotonic() + SEARCH_TIMEOUT_S
        while not done.wait(0.1):
            if (cancel is not None and cancel.is_set()) or time.monotonic() > deadline:
                stopped.append("cancelled" if cancel is not None and cancel.is_set() else "timeout")
                proc.kill()
                return

    threading.Thread(target=watchdog, daemon=True).start()
    out: list[Match] = []
    paths: dict[bytes, str] = {}
    buffer = b""
    ended = False  # ripgrep closed its output: it finished (or failed) by itself
    assert proc.stdout is not None and proc.stderr is not None
    try:
        while len(out) < limit:
            chunk = proc.stdout.read1(1 << 16)
            if not chunk:
                ended = True
                break
            buffer += chunk
            pos = 0  # records are read by offset; the buffer is cut once per chunk, not once per record
            while len(out) < limit:
                nul = buffer.find(b"\0", pos)
                newline = buffer.find(b"\n", nul + 1) if nul >= 0 else -1
                if newline < 0:
                    break
                match = _parse_record(buffer[pos:nul], buffer[nul + 1:newline], paths)
                pos = newline + 1
                if match is not None:
                    out.append(match)
            buffer = buffer[pos:]
    finally:
        done.set()
        stopped_early = not ended and proc.poll() is None
        if stopped_early:
            proc.kill()
        proc.stdout.close()
        # After a kill, ripgrep inside the sandbox may hold stderr open a little longer (it dies with
        # its sandbox): its messages are not needed then, so they are not waited for.
        stderr = "" if stopped_early else proc.stderr.read(4096).decode("utf-8", errors="replace")
        proc.stderr.close()
        code = proc.wait()
    return out, code, stderr, stopped


def rg_search(rg: str, root: Path, start: Path, query: str, regex: bool, glob: str | None, limit: int,
              cancel: threading.Event | None = None,
              confine: Confine | None = None) -> list[Match]:
    """Search with ripgrep; returns up to ``limit`` matches in path/line order.

    ``confine`` wraps the command line in the commands' sandbox: ripgrep opens
    paths itself, so a directory swapped for a symlink mid-search could lead it
    anywhere; inside the sandbox it can reach nothing a command could not
    (K1412's state, secrets and config stay hidden). The sandbox is kept between
    searches while it still covers what a fresh one would (``tools.sandbox.reader_sandbox``).
    """
    argv = rg_command(rg, root, start, query, regex, glob)
    if confine is not None:
        argv, extra = confine(argv)
        env = {"PATH": "/usr/bin:/bin", **extra}
        proc: ReaderProcess = start_reader(argv, root, env)
        out, code, stderr, stopped = _collect(proc, limit, cancel)
        if isinstance(proc, SandboxedProcess) and proc.stale:  # the kept sandbox no longer covers what it did
            out, code, stderr, stopped = _collect(start_reader(argv, root, env, fresh=True), limit, cancel)
    else:
        proc = subprocess.Popen(argv, cwd=root, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                                stderr=subprocess.PIPE, start_new_session=True)
        out, code, stderr, stopped = _collect(proc, limit, cancel)
    if stopped == ["timeout"]:
        raise ToolError(f"The search took longer than {SEARCH_TIMEOUT_S:.0f} s; narrow it with path or glob.")
    if stopped == ["cancelled"]:
        raise ToolError("The run was cancelled during the search.")
    refused = [ln for ln in stderr.splitlines() if ln.startswith("bwrap:")]
    if refused and not out:
        # The sandbox itself did not start (exit 1, like ripgrep's "no match"): never an empty answer.
        detail = refused[-1].removeprefix("bwrap:").strip()[:300]
        raise ToolError(f"The search could not start in its sandbox ({detail}), so nothing was searched; "
                        "try again, and tell the user if it keeps failing.")
    if code == 2 and not out and stderr.strip():
        lines = [ln.strip() for ln in stderr.strip().splitlines() if ln.strip()]
        detail = lines[-1].removeprefix("error: ").rstrip(".") if lines else "ripgrep failed"
        if "regex" in stderr or regex:
            raise ToolError(
                f"The regex is invalid ({detail}); fix it or pass regex=false to search for literal text."
            )
        raise ToolError(f"The search failed ({detail}); check the path and glob and try again.")
    return out


# --- the tool ------------------------------------------------------------------------------------


def _ripgrep_confinement(ctx: ToolContext) -> tuple[bool, Confine | None]:
    """Whether ripgrep may run, and the sandbox wrapper it runs in (None: the user turned the sandbox off).

    Without a working sandbox ripgrep does not run at all: the in-process
    search opens every path confined instead.
    """
    from k1412_ls.tools.processes.run_command import run_sandbox
    from k1412_ls.tools.sandbox.command_sandbox import bubblewrap, reader_argv

    sandbox = run_sandbox(ctx)
    if sandbox.policy.mode == "off":
        return True, None
    if not bubblewrap().active:
        return False, None
    root = ctx.workspace.root
    fixed = sandbox.fixed()

    def confine(argv: list[str]) -> tuple[list[str], dict[str, str]]:
        wrapped = reader_argv(argv, root, fixed)
        if wrapped is None:
            raise ToolError("No sandbox works on this machine any more, so the search was not run.")
        return wrapped, {}

    return True, confine



def search_files(args: SearchFilesArgs, ctx: ToolContext) -> ToolResult:
    """Find lines matching ``query``; results sorted by path then line, capped at max_results."""
    if "\n" in args.query or "\r" in args.query:
        raise ToolError("search_files matches within one line; search for a single line of the text.")
    real = ctx.workspace.resolve(args.path)
    rel = ctx.workspace.relative(real)
    if not real.exists():
        raise ToolError(f"{rel} does not exist; search an existing directory such as '.'.")
    if not (real.is_dir() or real.is_file()):
        raise ToolError(f"{rel} is not a regular file or directory; search files and directories only.")
    root = ctx.workspace.root
    rg = trusted_program("rg")
    wanted = args.max_results + 1  # one more than shown, to know whether there were more
    may_run, confine = _ripgrep_confinement(ctx)
    if rg and may_run:
        matches = rg_search(rg, root, real, args.query, args.regex, args.glob, wanted, ctx.cancel, confine)
    else:
        rg = None  # no sandbox to put ripgrep in: the in-process search opens every path confined
        matches = python_search(root, real, args.query, args.regex, args.glob, wanted, ctx.cancel)
    matches.sort(key=sort_key)
    truncated = len(matches) > args.max_results
    matches = matches[: args.max_results]
    fields: dict[str, object] = {
        "query": args.query, "path": rel, "matches": [m.as_dict() for m in matches], "count": len(matches),
        "truncated": truncated, "backend": "ripgrep" if rg else "python",
    }
    if truncated:
        fields["note"] = f"Stopped at {args.max_results} matches; narrow the search with path or glob."
    return ToolResult.success(facts={"kind": "inspect", "paths": [rel]}, **fields)


TOOLS: list[Tool] = [
    Tool("search_files", "Search workspace files for a literal string (or a regex with regex=true); "
         "respects .gitignore; returns path, line, column and the line text.",
         SearchFilesArgs, search_files, parallel_safe=True, read_only=True, tags=frozenset({"core"})),
]
