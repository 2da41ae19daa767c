"""One command's confinement, worked out and applied: the flags its bubblewrap sandbox gets now, the
system-call filter's descriptor and the placeholder directories it holds (the run's policy and mount plan:
``tools.sandbox.command_sandbox``)."""

from __future__ import annotations

import functools
import sys
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import NamedTuple

from k1412_ls.tools.errors import ToolError
from k1412_ls.tools.sandbox import landlock
from k1412_ls.tools.sandbox.bubblewrap import (
    NETWORK_OFF_LABEL,
    SANDBOXED,
    UNSANDBOXED_BY_USER,
    bubblewrap,
    network_namespace_problem,
    refusal,
)
from k1412_ls.tools.sandbox.command_sandbox import RunSandbox, sandbox_plan
from k1412_ls.tools.sandbox.mounts import PLACEHOLDERS, MountPlan
from k1412_ls.tools.sandbox.seccomp import command_filter, filter_fd, filter_problem


class Confined(NamedTuple):
    """A command made ready for bubblewrap: what to run, how it is labelled, what to do around it."""

    argv: list[str]
    label: str
    env: dict[str, str]  # environment overrides
    release: Callable[[], None]  # call once the command has ended (placeholder directories, ``tools.sandbox.mounts``)
    fds: tuple[int, ...] = ()  # descriptors bubblewrap reads at start: pass them, then close them in the parent


@dataclass(frozen=True)
class CommandPlan:
    """How one command is to be confined, worked out before anything starts (no descriptor, no directory made)."""

    plan: MountPlan
    label: str
    network: bool
    bwrap: str
    pins: tuple[tuple[str, str], ...] = ()  # this command's own judged files: (private copy, path)
    copies: str = ""  # the directory of those copies, removed when the command ends

    def key(self) -> tuple[str, ...]:
        """Everything that decides the sandbox except the working directory (a kept sandbox changes to it)."""
        flags = self.plan.flags
        kept = [f for i, f in enumerate(flags) if f != "--chdir" and (i == 0 or flags[i - 1] != "--chdir")]
        return (self.bwrap, self.label, *kept)


def plan_command(sandbox: RunSandbox, workspace: Path, cwd: Path, network: bool | None = None) -> CommandPlan | None:
    """The confinement of the next command per the run's policy; None when the user turned the sandbox off.

    Raises :class:`ToolError` (one sentence) when the command cannot run as confined as the policy says.
    Undoes second names of git-dir files first (:meth:`RunSandbox.guard_git_links`).
    """
    policy = sandbox.policy
    sandbox.note_root(workspace)
    net = policy.network if network is None else network
    if policy.mode == "off":
        return None
    box = bubblewrap()
    if box.path is None:
        raise refusal(box)
    problem = filter_problem()
    if problem is not None:
        raise ToolError(f"Commands cannot run because {problem}, and K1412 runs none without its system-call "
                        "filter; install libseccomp, or, at your own risk, set [sandbox] mode = \"off\" in your "
                        "user configuration.")
    label = SANDBOXED
    if not net:
        problem = network_namespace_problem()
        if problem is not None:
            raise ToolError(f"The network is off for commands but {problem}, so commands cannot run; set "
                            "[sandbox] network = true in your user configuration to run them with the network.")
        label = f"{SANDBOXED}, {NETWORK_OFF_LABEL}"
    nested = () if policy.git_writable else sandbox.nested_git(workspace)
    sandbox.guard_git_links(workspace, nested, policy.git_writable)
    own, copies = sandbox.registry.materialize(sandbox.judged)
    pins = tuple(dict.fromkeys((*sandbox.registry.live(), *own)))
    plan = sandbox_plan(policy, workspace, cwd, sandbox.tmp_dir(), net, sandbox.fixed(), nested, pins)
    return CommandPlan(plan, label, net, box.path, own, copies)


def confined_argv(argv: list[str], sandbox: RunSandbox, workspace: Path, cwd: Path,
                  network: bool | None = None, planned: CommandPlan | None = None) -> Confined:
    """``argv`` wrapped in bubblewrap per the run's policy (see :class:`Confined`).

    ``planned`` is :func:`plan_command`'s answer when the caller has it already. Raises
    :class:`ToolError` (one sentence) when the command cannot run as confined as the policy says.
    """
    sandbox.note_root(workspace)
    if sandbox.policy.mode == "off":
        return Confined(argv, UNSANDBOXED_BY_USER, {}, _nothing)
    planned = planned or plan_command(sandbox, workspace, cwd, network)
    assert planned is not None
    return confine(argv, planned)


@functools.cache
def landlock_works() -> bool:
    """Whether this kernel has Landlock (checked once per process)."""
    return landlock.available()


def writable_trees(planned: CommandPlan) -> list[str]:
    """Where the command may open files for writing: its writable mounts, the run's ``/tmp`` and ``/dev``."""
    return [*planned.plan.writable, "/tmp", "/dev"]


def confine(argv: list[str], planned: CommandPlan, *, landlocked_inside: bool = False) -> Confined:
    """``argv`` in the sandbox ``planned`` describes: the system-call filter's descriptor made, placeholders held,
    and (where the kernel has Landlock) opening files for writing limited to the writable trees
    (``tools.sandbox.landlock``: a FIFO on a read-only host path is no way out). ``landlocked_inside``: ``argv``
    applies the same Landlock ruleset itself before it runs the command (the stage of a kept sandbox)."""
    fd = filter_fd(command_filter(planned.network))
    flags = [*planned.plan.flags, "--seccomp", str(fd)]
    fds = (fd,)
    made = list(planned.plan.placeholders)
    PLACEHOLDERS.acquire(made)
    helper = landlock_works() and not landlocked_inside
    inner = landlock.exec_argv(sys.executable, writable_trees(planned), argv) if helper else argv
    return Confined([planned.bwrap, *flags, "--", *inner], planned.label, {"TMPDIR": "/tmp"},
                    functools.partial(PLACEHOLDERS.release, made), fds)


def _nothing() -> None:
    return None


__all__ = ["CommandPlan", "Confined", "confine", "confined_argv", "landlock_works", "plan_command", "writable_trees"]
