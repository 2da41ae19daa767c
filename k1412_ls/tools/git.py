"""Read-only git tools: ``git_status`` and ``git_diff``, safe on a hostile repository.

Git runs commands named in repository configuration (``core.fsmonitor``,
``filter.<x>.clean`` through ``.gitattributes``, ``diff.external``, pagers,
hooks). A workspace from an untrusted source must not execute anything
just because the agent looked at its status, so every git call gets these
keys overridden in the command-line scope (which beats every config file),
including an empty clean/smudge/process for every filter any config or
attributes file names.
"""

from __future__ import annotations

import os
import re
import stat
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict, Field

from k1412_ls.tools.errors import ToolError
from k1412_ls.tools.files.documents import file_kind, read_fd
from k1412_ls.tools.processes.child_processes import Completed, run_to_end
from k1412_ls.tools.registry import Tool, ToolContext, ToolResult
from k1412_ls.tools.sandbox.environment import scrubbed_env
from k1412_ls.tools.sandbox.trusted import SAFE_PATH, trusted_program

GIT_TIMEOUT_S = 60.0
# Larger attributes files are refused: the filters they name could not all be neutralised.
MAX_ATTRIBUTES_BYTES = 1024 * 1024

# Keys whose values git would execute (or that let it reach the network) during status/diff.
NEUTRALIZED_CONFIG: tuple[tuple[str, str], ...] = (
    ("core.fsmonitor", "false"),
    ("core.pager", "cat"),
    ("pager.status", "false"),
    ("pager.diff", "false"),
    ("diff.external", ""),
    ("core.hooksPath", "/dev/null"),
    ("core.sshCommand", ""),
    ("core.askPass", ""),
    ("credential.helper", ""),
    ("core.editor", "true"),
    ("sequence.editor", "true"),
    ("gpg.program", "false"),
    # Partial clones fetch missing blobs lazily; no transport may run.
    ("protocol.allow", "never"),
    ("safe.bareRepository", "explicit"),
    ("core.quotePath", "false"),
    ("color.ui", "false"),
)
_FILTER_KEY = re.compile(r"^filter\.(.+)\.(?:clean|smudge|process|required)$", re.S)
_ATTR_FILTER = re.compile(r"(?:^|\s)filter=(\S+)")


class GitStatusArgs(BaseModel):
    """git_status takes no arguments."""

    model_config = ConfigDict(extra="forbid")


class GitDiffArgs(BaseModel):
    """Arguments of git_diff."""

    model_config = ConfigDict(extra="forbid")

    path: str | None = Field(default=None, description="Limit the diff to this file or directory.")
    staged: bool = Field(default=False, description="Show staged changes (index vs HEAD) instead of unstaged.")


def _config_env(pairs: list[tuple[str, str]], base: dict[str, str]) -> dict[str, str]:
    # GIT_CONFIG_KEY_n/VALUE_n keep keys and values apart, so no filter name can smuggle in an '='.
    env = {k: v for k, v in base.items() if not k.startswith("GIT_")}
    # A fixed system PATH: nothing git starts (ssh, pagers, helpers) comes from a user-writable directory.
    env.update(PATH=SAFE_PATH, GIT_CONFIG_NOSYSTEM="1", GIT_TERMINAL_PROMPT="0", GIT_OPTIONAL_LOCKS="0",
               GIT_CONFIG_COUNT=str(len(pairs)))
    for index, (key, value) in enumerate(pairs):
        env[f"GIT_CONFIG_KEY_{index}"] = key
        env[f"GIT_CONFIG_VALUE_{index}"] = value
    return env


class SafeGit:
    """Runs git in the workspace with repository-supplied commands neutralised."""

    def __init__(self, ctx: ToolContext) -> None:
        self.ctx = ctx
        self.root = ctx.workspace.root
        git = trusted_program("git")
        if git is None:
            raise ToolError("git is not installed in a system directory on this machine; inspect files with "
                            "list_files and read_file.")
        self.git = git
        self.base_env = scrubbed_env(ctx.env, redactor=ctx.redactor)
        self.env = _config_env(list(NEUTRALIZED_CONFIG), self.base_env)
        info_attributes = self._discover()
        filters = self._filter_names(info_attributes)
        pairs = list(NEUTRALIZED_CONFIG)
        for name in sorted(filters):
            pairs += [(f"filter.{name}.clean", ""), (f"filter.{name}.smudge", ""),
                      (f"filter.{name}.process", ""), (f"filter.{name}.required", "false")]
        self.env = _config_env(pairs, self.base_env)

    def run(self, *args: str) -> Completed:
        """Run ``git args`` at the workspace root; the caller checks the exit code."""
        done = run_to_end([self.git, "--no-pager", *args], self.root, self.env, timeout_s=GIT_TIMEOUT_S,
                          cancel=self.ctx.cancel)
        if done.cancelled:
            raise ToolError("The run was cancelled while git was running; nothing else was done.")
        if done.timed_out:
            raise ToolError(f"git did not finish within {GIT_TIMEOUT_S:g} s and was stopped; limit the request "
                            "to a path or inspect files directly.")
        return done

    def _discover(self) -> Path | None:
        """Check that git accepts the repository; return where its info/attributes file lives."""
        done = self.run("rev-parse", "--git-path", "info/attributes")
        text = done.output
        if done.exit_code == 0:
            lines = text.strip().splitlines()
            return self.root / lines[-1] if lines else None
        if "dubious ownership" in text:
            where = self.ctx.redactor.text(_quoted_path(text) or str(self.root))
            raise ToolError(f"git refuses the repository at {where} because another user owns it (safe.directory); "
                            f"ask the user to trust it with `git config --global --add safe.directory {where}`.")
        if "not a git repository" in text.lower():
            raise ToolError("The workspace is not a git repository; inspect files with list_files and read_file, "
                            "or run `git init` first if the task needs version control.")
        first = self.ctx.redactor.text(text.strip().splitlines()[0] if text.strip() else f"exit {done.exit_code}")
        raise ToolError(f"git could not open the repository ({first}); fix the repository or inspect files directly.")

    def _filter_names(self, info_attributes: Path | None) -> set[str]:
        names: set[str] = set()
        listing = self.run("config", "--null", "--name-only", "--get-regexp", r"^filter\.")
        if listing.omitted_bytes:
            # Names in the omitted middle could not be neutralised: refuse rather than run them.
            raise ToolError("The repository configuration names too many filters to neutralise safely; "
                            "inspect files with read_file instead of git.")
        if listing.exit_code == 0:
            for key in listing.output.split("\0"):
                match = _FILTER_KEY.match(key.strip("\n"))
                if match:
                    names.add(match.group(1))
        attributes = [self.root / ".gitattributes"]
        if info_attributes is not None:
            attributes.append(info_attributes)
        for path in attributes:
            names.update(_ATTR_FILTER.findall(self._attributes_text(path)))
        return names

    def _attributes_text(self, path: Path) -> str:
        """An attributes file's text, read without ever blocking or reading without end.

        A hostile repository can make ``.gitattributes`` a FIFO (a plain read
        blocks forever, and so would git) or ``.git/info/attributes`` a
        symlink to ``/dev/zero`` (a plain read exhausts memory). Only regular
        files are read, opened non-blocking and capped; anything else is
        refused before git runs.
        """
        shown = self.ctx.workspace.relative(path) if path.is_relative_to(self.root) else path.name
        try:
            fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | os.O_CLOEXEC)
        except OSError:
            return ""  # missing or unreadable: git cannot use it either
        try:
            info = os.fstat(fd)
            if not stat.S_ISREG(info.st_mode):
                raise ToolError(f"{shown} is a {file_kind(info.st_mode)}, not a regular file, and git would hang "
                                "or read it forever; remove it with run_command before using the git tools.")
            data = read_fd(fd, MAX_ATTRIBUTES_BYTES + 1)
        finally:
            os.close(fd)
        if len(data) > MAX_ATTRIBUTES_BYTES:
            raise ToolError(f"{shown} is larger than {MAX_ATTRIBUTES_BYTES // 1024} KB, too large to neutralise "
                            "its filters safely; inspect files with read_file instead of git.")
        return data.decode("utf-8", "replace")


def _quoted_path(text: str) -> str | None:
    match = re.search(r"repository at '([^']+)'", text)
    return match.group(1) if match else None


def _status_paths(output: str) -> list[str]:
    paths: list[str] = []
    for line in output.splitlines():
        if len(line) < 4 or line.startswith("##") or line[2] != " ":
            continue
        entry = line[3:]
        for part in entry.split(" -> "):
            path = part.strip().strip('"').rstrip("/")
            if path and path not in paths:
                paths.append(path)
    return paths


def _output_fields(ctx: ToolContext, done: Completed) -> dict[str, Any]:
    fields: dict[str, Any] = {"output": ctx.redactor.text(done.output), "output_bytes": done.output_bytes}
    if done.omitted_bytes:
        fields["omitted_bytes"] = done.omitted_bytes
    return fields


def _git_failed(ctx: ToolContext, what: str, done: Completed) -> ToolError:
    lines = done.output.strip().splitlines()
    reason = ctx.redactor.text(lines[-1] if lines else f"exit code {done.exit_code}")
    return ToolError(f"git {what} failed ({reason}); check the arguments and the repository state.")


def git_status(args: GitStatusArgs, ctx: ToolContext) -> ToolResult:
    """Branch and changed/untracked files of the workspace (paths relative to it)."""
    git = SafeGit(ctx)
    done = git.run("status", "--short", "--branch", "--ignore-submodules=dirty", "--", ".")
    if done.exit_code != 0:
        raise _git_failed(ctx, "status", done)
    fields = _output_fields(ctx, done)
    paths = _status_paths(done.output)
    facts = {"kind": "git", "op": "status", "paths": paths[:500]}
    return ToolResult.success(facts=facts, clean=not paths, **fields)


def git_diff(args: GitDiffArgs, ctx: ToolContext) -> ToolResult:
    """The unified diff of unstaged (or staged) changes, optionally for one path."""
    pathspec = "."
    if args.path:
        pathspec = ctx.workspace.relative(ctx.workspace.resolve(args.path))
    git = SafeGit(ctx)
    common = ["--no-ext-diff", "--no-textconv", "--no-color", "--ignore-submodules=dirty", "--relative"]
    if args.staged:
        common.append("--cached")
    done = git.run("diff", *common, "--", pathspec)
    if done.exit_code != 0:
        raise _git_failed(ctx, "diff", done)
    names = git.run("diff", *common, "--name-only", "-z", "--", pathspec)
    paths = [p for p in names.output.split("\0") if p.strip()] if names.exit_code == 0 else []
    facts = {"kind": "git", "op": "diff", "paths": paths[:500], "staged": args.staged}
    fields = _output_fields(ctx, done)
    if not done.output.strip():
        fields["message"] = "No staged changes." if args.staged else "No unstaged changes."
    return ToolResult.success(facts=facts, path=pathspec, staged=args.staged, files=len(paths), **fields)


_TAGS = frozenset({"git"})

TOOLS: list[Tool] = [
    Tool(
        name="git_status",
        description="Show the git branch and the changed, staged and untracked files in the workspace.",
        args_model=GitStatusArgs, handler=git_status, parallel_safe=True, read_only=True, tags=_TAGS,
    ),
    Tool(
        name="git_diff",
        description="Show the git diff of unstaged changes (or staged ones with staged=true), optionally for a path.",
        args_model=GitDiffArgs, handler=git_diff, parallel_safe=True, read_only=True, tags=_TAGS,
    ),
]
