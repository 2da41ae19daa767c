"""The approval policy: which commands run at once, which are asked about, which never run.

Policies (the ``[approval]`` configuration, after Codex's modes):

* ``on-request`` (default): commands run inside the sandbox without asking;
  a command that needs more than the sandbox gives — the network while it is
  off, writing ``.git`` while it is read-only, writing outside the workspace
  and ``/tmp`` (as far as its redirections and ``cp``/``mv``/``touch``…
  arguments say) — is asked about;
* ``untrusted``: every command is asked about except read-only inspection
  (``ls``, ``cat``, ``grep``, ``git status`` …) and what a rule allows;
* ``never``: nothing is asked; what would need asking is refused and the
  model is told why.

Prefix rules (``[[approval.rules]] prefix = "git push", decision = "forbid"``)
match a simple command's leading words; the strictest decision of every rule
that matches any command of the line wins (forbid > ask > allow). "Always
allow" answers are kept per user as allow rules for the command's *prefix*
(``npm install left-pad`` → ``npm install``), never the exact string.

Asking goes through an :data:`Approver` the adapter supplies (the editor's
``window/showMessageRequest``, a terminal prompt); no approver or no answer
means deny.
"""

from __future__ import annotations

import hashlib
import logging
import os
import re
import shutil
import threading
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from enum import StrEnum
from pathlib import Path
from typing import Any

from k1412_ls.shell.grammar import substitution_scripts
from k1412_ls.shell.parse import parse_line
from k1412_ls.shell.words import program_name, strip_wrappers
from k1412_ls.text.lossless import visible
from k1412_ls.tools.approval.allow_store import AllowStore
from k1412_ls.tools.approval.command_reading import (
    GIT_COMMANDS,
    MAX_SUBSTITUTIONS,
    command_words,
    embedded_commands,
    generalized_prefix,
    needs_network,
    read_only,
    rule_views,
    started_by_xargs,
    writes_git,
    written_paths,
)
from k1412_ls.tools.approval.judged_reads import JudgedReads, judged_files, judging, record
from k1412_ls.tools.approval.prefix_rules import PrefixRule, parse_rules, uncertain_rule
from k1412_ls.tools.approval.script_reading import (
    repo_config_runs_programs,
    repo_git_aliases,
    scripts_run_by,
    written_keys,
)
from k1412_ls.tools.approval.write_reach import outside_writable, writable_dir_for
from k1412_ls.tools.errors import ToolError
from k1412_ls.tools.sandbox.command_sandbox import SandboxPolicy
from k1412_ls.tools.sandbox.pinned_files import Judged

log = logging.getLogger(__name__)

_STRICTNESS = {"allow": 0, "ask": 1, "forbid": 2}
# git settings given through the environment can define aliases (``GIT_CONFIG_KEY_0=alias.p``): the sub-command
# a rule would see is then unknown.
_GIT_CONFIG_FROM_ENV = re.compile(r"\bGIT_CONFIG_(?:COUNT|KEY_\d+|VALUE_\d+|PARAMETERS)\b|--config-env")
# Shell builtins that may share a line with an allowed command without taking any of its grant.
_INERT_BUILTINS = frozenset({"cd", "pushd", "popd", ":", "exit", "sleep", "set"})
MAX_SCRIPT_DEPTH = 3  # scripts that run scripts (make → a shell script → a sourced file), read this deep


def _digest(path: Path) -> bytes:
    digest = hashlib.sha256()
    try:
        with open(path, "rb") as handle:
            for block in iter(lambda: handle.read(1 << 20), b""):
                digest.update(block)
    except OSError:
        return b""
    return digest.digest()


class Decision(StrEnum):
    """A user's (or the policy's) answer to one approval request."""

    ALLOW_ONCE = "allow_once"
    ALLOW_ALWAYS = "allow_always"
    DENY = "deny"


@dataclass(frozen=True)
class ApprovalPolicy:
    """The ``[approval]`` configuration."""

    policy: str = "on-request"
    rules: tuple[PrefixRule, ...] = ()


@dataclass(frozen=True)
class ApprovalRequest:
    """What the user is asked: the command, why, and the prefix "always allow" would cover."""

    command: str
    reasons: tuple[str, ...]
    prefix: tuple[str, ...]

    @property
    def prefix_text(self) -> str:
        return " ".join(self.prefix)

    def question(self) -> str:
        """One paragraph for a prompt: the whole command and why it is asked about, every control, format or bidi
        character shown, none interpreted (``text.lossless.visible``), as the terminal prompt shows it: a cut
        command or a raw ``ESC[2K`` would let the part the user approves differ from the part that runs."""
        shown = visible(self.command, keep_lines=False)
        return f"K1412 wants to run `{shown}`: {visible('; '.join(self.reasons), keep_lines=False)}. Allow it?"

    def as_payload(self) -> dict[str, Any]:
        return {"command": self.command, "reasons": list(self.reasons), "prefix": self.prefix_text}


# Called from a tool thread; returns None for "no answer" (deny). Must give up once ``cancel`` is set.
Approver = Callable[[ApprovalRequest, threading.Event], "Decision | None"]


@dataclass(frozen=True)
class Grant:
    """What an approved command may do beyond the run's sandbox policy."""

    network: bool | None = None
    git_writable: bool = False
    writable: tuple[str, ...] = ()  # directories outside the workspace this command may write
    withheld: str = ""  # why a rule's grant was not given to this line (said to the model with the result)
    judged: Judged = ()  # files the rules judged by content: bound read-only with those bytes (tools.sandbox.pinned_files)

    def sandbox_policy(self, base: SandboxPolicy) -> SandboxPolicy:
        policy = base
        if self.git_writable and not base.git_writable:
            policy = replace(policy, git_writable=True)
        if self.writable:
            policy = replace(policy, writable=(*policy.writable, *self.writable))
        return policy


def _narrowed(grant: Grant, allowed_by: list[str], uncovered: list[str], opaque: bool) -> Grant:
    """A rule's grant, or none when the line runs more than the rule covers.

    An ``allow`` rule (configured or "always allow") vouches for the commands it
    matches, not for the rest of their line: ``pip install x; python3 evil.py``
    must not give ``python3`` the network. So the grant holds only when every
    other command of the line is a plain reader that writes nothing; otherwise
    the line runs inside the unwidened sandbox and the model is told why.
    """
    wanted = [what for what, on in (("the network", grant.network), ("a writable .git", grant.git_writable),
                                    ("writes outside the workspace", bool(grant.writable))) if on]
    if not wanted or not (uncovered or opaque):
        return grant
    others = ", ".join(f"'{p}'" for p in dict.fromkeys(uncovered[:5]))
    also = f"also runs {others}" if others else "cannot be read reliably"
    rules = ", ".join(f"'{p}'" for p in dict.fromkeys(allowed_by)) or "an allow rule"
    return Grant(judged=grant.judged, withheld=(f"The approval rule {rules} grants {' and '.join(wanted)} only to the commands it matches, and "
                           f"this line {also}, so it ran without {' or '.join(wanted)}; run the allowed command on a "
                           "line of its own to use the grant."))


Emit = Callable[[str, dict[str, Any]], None]


@dataclass
class ApprovalGate:
    """One run's approval decisions (the ``approval`` service)."""

    policy: ApprovalPolicy = field(default_factory=ApprovalPolicy)
    sandbox: SandboxPolicy = field(default_factory=SandboxPolicy)
    approver: Approver | None = None
    store: AllowStore | None = None
    user: str = "default"
    emit: Emit | None = None
    git_dir_exists: Callable[[], bool] = lambda: True
    workspace: Path | None = None
    others_running: Callable[[], bool] = lambda: False  # another command of the run runs now (it could rewrite files)
    cancel: threading.Event = field(default_factory=threading.Event)
    _session: list[PrefixRule] = field(default_factory=list)

    def _identified(self, words: list[str], raw: list[str]) -> list[str] | None:
        """``words`` with a program given by path named after what the path really is (``./gt`` → ``git`` when
        it is a link to git); None for a path that does not exist yet (made by the same line)."""
        program = raw[0] if raw else ""
        if "/" not in program:
            return words
        path = Path(program) if program.startswith("/") else self._base() / program
        if not os.path.lexists(path):
            return None
        if os.path.isfile(path) and any(r.decision != "allow" for r in self._rules()):
            record(path, None)  # what the program is was judged: it runs as it was read
        real = program_name(os.path.realpath(path))
        if not words:
            return words
        real = self._same_program(path, real)
        if real == words[0]:
            return words
        return command_words([real, *raw[1:]])

    def _same_program(self, path: Path, name: str) -> str:
        """The name of the program a ``ask``/``forbid`` rule names that ``path`` is a copy or hard link of
        (``cp /usr/bin/git ./g`` earlier, then ``./g push``); else ``name``."""
        try:
            info = path.stat()
        except OSError:
            return name
        for rule in self._rules():
            wanted = rule.prefix[0]
            if rule.decision == "allow" or wanted == name or "/" in wanted:
                continue
            found = shutil.which(wanted)
            if found is None:
                continue
            try:
                target = os.stat(found)
            except OSError:
                continue
            if (info.st_dev, info.st_ino) == (target.st_dev, target.st_ino) or (
                    info.st_size == target.st_size and _digest(path) == _digest(Path(found))):
                return wanted
        return name

    def _alias_rules(self, words: list[str], strict: list[PrefixRule]) -> list[PrefixRule]:
        """The ``ask``/``forbid`` rules ``git ALIAS`` meets through the repository's own alias of that name."""
        if len(words) < 2 or words[0] != "git" or not words[1] or words[1] in GIT_COMMANDS:
            return []
        value = repo_git_aliases(self._base()).get(words[1].lower())
        if not value:
            return []
        text = value[1:] if value.startswith("!") else "git " + value
        met: list[PrefixRule] = []
        for inner in parse_line(text, nesting=1).commands:
            expanded = command_words([*inner.literal_argv, *(words[2:] if not value.startswith("!") else [])])
            met += [r for r in strict if any(r.matches(v) or r.found_in(v) for v in rule_views(expanded))]
        return met

    def _base(self) -> Path:
        return self.workspace if self.workspace is not None else Path.cwd()

    def _script_rules(self, words: list[str], raw: list[str], strict: list[PrefixRule], written: set[str],
                      depth: int = 0) -> tuple[list[PrefixRule], list[str]]:
        """The ``ask``/``forbid`` rules that commands in the scripts this command runs meet (make recipes and
        ``$(shell …)``, shell scripts, sourced files: ``tools.approval.script_reading``), read as the line itself
        is, scripts they run included; and why any of it cannot be read (a script the line writes, a non-literal
        word where a rule's words stand, scripts nested too deep)."""
        texts = scripts_run_by(words, raw, self._base(), written)
        if texts is None:
            return [], [f"'{words[0]}' runs a script that cannot be read before it runs (written by the line, "
                        "named by an expansion, or not a readable file)"]
        if texts and depth >= MAX_SCRIPT_DEPTH:
            return [], ["the scripts it runs run scripts deeper than K1412 reads"]
        met: list[PrefixRule] = []
        unsure: list[str] = []
        for text in texts:
            line = parse_line(text, nesting=1)
            if not line.parsed or line.tampered:
                unsure.append(f"a script '{words[0]}' runs cannot be read reliably "
                              f"({line.tampered or 'it does not parse'})")
            simples = list(line.commands)
            for script in substitution_scripts(text)[:MAX_SUBSTITUTIONS]:
                simples += list(parse_line(script, nesting=1).commands)
            inner_written = written | written_keys(
                [t for simple in simples for t in written_paths(command_words(simple.literal_argv), simple.writes_to)],
                self._base())
            for simple in simples:
                for inner in [command_words(simple.literal_argv), *embedded_commands(simple.literal_argv)]:
                    if not inner:
                        continue
                    if inner[0] == "":
                        unsure.append(f"a program name in a script '{words[0]}' runs comes from an expansion")
                        continue
                    met += [r for r in strict if any(r.matches(v) or r.found_in(v) for v in rule_views(inner))]
                    why = uncertain_rule(inner, strict)
                    if why:
                        unsure.append(why)
                    deeper, unclear = self._script_rules(inner, strip_wrappers(simple.literal_argv), strict,
                                                         inner_written, depth + 1)
                    met += deeper
                    unsure += unclear
        return met, unsure

    def _rules(self) -> list[PrefixRule]:
        saved = self.store.rules(self.user) if self.store is not None else ()
        return [*self.policy.rules, *saved, *self._session]

    def check(self, command: str) -> Grant:
        """Decide about ``command``: a :class:`Grant` to run it, or a :class:`ToolError` saying why not.

        What the rules judge by file content (scripts, makefiles, ``package.json``, a program's bytes) is in the
        grant (``judged``) so that exactly those bytes run (``tools.sandbox.pinned_files``); while another
        command of the run is running, content cannot be trusted that way and the line is asked about.
        """
        with judging() as reads:
            return self._check(command, reads)

    def _check(self, command: str, reads: JudgedReads) -> Grant:
        line = parse_line(command)
        rules = self._rules()
        verdict = "allow"
        reasons: list[str] = []
        wants_network = wants_git = False
        wants_dirs: list[str] = []
        first_words: list[str] = []
        allowed_by: list[str] = []  # prefixes of the allow rules that matched
        uncovered: list[str] = []  # programs no allow rule covers that are more than plain readers
        opaque = not line.parsed or bool(line.tampered)
        candidates: list[tuple[list[str], bool, tuple[str, ...], list[str], bool]] = []
        simples = list(line.commands)
        # Commands inside $( ), backticks and <( ) run too, though their statuses never reach the line.
        for script in substitution_scripts(command)[:MAX_SUBSTITUTIONS]:
            inner_line = parse_line(script, nesting=1)
            opaque = opaque or not inner_line.parsed or bool(inner_line.tampered)
            simples += list(inner_line.commands)
        for simple in simples:
            argv = simple.literal_argv
            words = command_words(argv)
            prefix_vars = [f"{name}=" for name in simple.assigned]
            candidates.append((words, bool(words and not words[0]), simple.writes_to,
                               strip_wrappers(argv), started_by_xargs(argv), [*prefix_vars, *argv]))
            candidates += [(inner, not inner[0], (), inner, False, inner)
                           for inner in embedded_commands(argv) if inner]
        strict = [r for r in rules if r.decision != "allow"]
        written = written_keys([t for simple in simples
                                for t in written_paths(command_words(simple.literal_argv), simple.writes_to)],
                               self._base())
        unsure: list[str] = []
        for words, dynamic_program, redirects, raw, via_xargs, argv in candidates:
            if not words:
                continue
            if not first_words:
                first_words = words
            if dynamic_program:
                # The program itself comes from an expansion (``$g push``): no rule can be matched.
                opaque = True
                continue
            if via_xargs:
                partial = [r for r in rules if r.decision != "allow" and len(r.prefix) > len(words)
                           and r.prefix[:len(words)] == tuple(words)]
                if partial:
                    reasons.append(f"xargs gives '{words[0]}' arguments from its input, so the rule "
                                   f"'{' '.join(partial[0].prefix)}' cannot be checked")
            words = self._identified(words, raw)
            if words is None:
                opaque = True  # a program by a path that does not exist yet: nothing to match rules against
                continue
            decided = [r for r in rules if r.matches(words) or (r.decision != "allow" and any(
                r.matches(v) or r.found_in(v) for v in rule_views(words)))]
            if strict:
                decided += self._alias_rules(words, strict)
                why = uncertain_rule(words, strict)
                if why:
                    unsure.append(why)
                from_scripts, unclear = self._script_rules(words, raw, strict, written)
                unsure += unclear
                decided += from_scripts
            strictest = max((r.decision for r in decided), key=_STRICTNESS.__getitem__, default=None)
            if strictest == "forbid":
                rule = next(r for r in decided if r.decision == "forbid")
                self._decided(command, "forbid", "rule", " ".join(rule.prefix))
                raise ToolError(f"The command is forbidden by the approval rule '{' '.join(rule.prefix)}' in the "
                                "configuration; do not run it or anything equivalent.")
            if strictest == "ask":
                verdict = "ask"
                rule = next(r for r in decided if r.decision == "ask")
                reasons.append(f"a rule asks before '{' '.join(rule.prefix)}'")
                continue
            allowed = strictest == "allow"
            if allowed:
                allowed_by.append(" ".join(next(r for r in decided if r.decision == "allow").prefix))
            elif not (read_only(words, raw, argv) or words[0] in _INERT_BUILTINS) \
                    or any(t != "/dev/null" for t in written_paths(words, redirects)):
                uncovered.append(words[0])
            # What the command needs beyond the sandbox is granted when it is approved or a rule allows it.
            if not self.sandbox.network and needs_network(words):
                wants_network = True
                if not allowed:
                    reasons.append(f"'{' '.join(words[:2])}' needs the network, which is off for commands")
            if not self.sandbox.git_writable and writes_git(words) and self.git_dir_exists():
                wants_git = True
                if not allowed:
                    reasons.append(f"'{' '.join(words[:2])}' writes .git, which is read-only for commands")
            for target in written_paths(words, redirects):
                outside = outside_writable(target, self.workspace, self.sandbox.writable)
                if outside is not None:
                    wants_dirs.append(writable_dir_for(outside))
                    if not allowed:
                        reasons.append(f"it writes {outside}, outside the workspace and /tmp")
            if self.policy.policy == "untrusted" and not allowed and (
                    via_xargs or not read_only(words, raw, argv)
                    or any(t != "/dev/null" for t in written_paths(words, redirects))
                    or (words[0] == "git" and repo_config_runs_programs(self._base()))):
                reasons.append("the approval policy 'untrusted' asks before commands that may change things")
        opaque = opaque or bool(_GIT_CONFIG_FROM_ENV.search(command))
        judged: Judged = ()
        if strict:
            roots = [os.path.realpath(os.path.expanduser(w)) for w in self.sandbox.writable]
            judged, distrust = judged_files(reads, [*roots, os.path.realpath(self._base())], self._base(),
                                            others=self.others_running(), alone=len(candidates) <= 1)
            unsure += distrust
        if unsure:
            reasons += [f"the approval rules cannot be checked: {why}" for why in dict.fromkeys(unsure[:3])]
        if opaque and (self.policy.policy == "untrusted" or any(r.decision != "allow" for r in rules)):
            reasons.append("the command line cannot be read reliably (a program name comes from an expansion "
                           "or the line does not parse), so the approval rules cannot be checked")
        if reasons and verdict == "allow":
            verdict = "ask"
        grant = Grant(network=True if wants_network else None, git_writable=wants_git,
                      writable=tuple(dict.fromkeys(wants_dirs)), judged=judged)
        if verdict == "allow":
            return _narrowed(grant, allowed_by, uncovered, opaque or bool(unsure))
        request = ApprovalRequest(command, tuple(dict.fromkeys(reasons)), generalized_prefix(first_words))
        return self._ask(request, grant)

    def check_tool(self, name: str, reasons: list[str], shown: str) -> None:
        """Decide about a call of a tool that is not a command (an MCP server's): the rules whose prefix is the
        tool's name first, then a question when ``reasons`` says why one is needed; ToolError when it must not run."""
        decided = [r for r in self._rules() if r.matches([name])]
        strictest = max((r.decision for r in decided), key=_STRICTNESS.__getitem__, default=None)
        if strictest == "forbid":
            self._decided(shown, "forbid", "rule", name)
            raise ToolError(f"The call is forbidden by the approval rule '{name}' in the configuration; do not "
                            "call it or anything equivalent.")
        if strictest == "allow":
            return
        why = [*reasons, *(["a rule asks before it"] if strictest == "ask" else [])]
        if why:
            self._ask(ApprovalRequest(shown, tuple(why), (name,)), Grant())

    def _ask(self, request: ApprovalRequest, grant: Grant) -> Grant:
        why = "; ".join(request.reasons)
        if self.policy.policy == "never":
            self._decided(request.command, "deny", "policy", request.prefix_text)
            raise ToolError(f"The command was not run: {why}, and the approval policy 'never' does not ask; do the "
                            "work without it or tell the user what it needs.")
        if self.emit is not None:
            self.emit("approval.requested", request.as_payload())
        answer: Decision | None = None
        if self.approver is not None:
            try:
                answer = self.approver(request, self.cancel)
            except Exception:  # an approver that fails has not approved
                log.exception("the approver failed; treating it as deny")
                answer = None
        if answer is None:
            self._decided(request.command, "deny", "policy" if self.approver is None else "no answer",
                          request.prefix_text)
            raise ToolError(f"The command was not run: {why}, and nobody approved it (no one was asked, or no "
                            "answer came); do the work without it or tell the user what it needs.")
        if answer is Decision.DENY:
            self._decided(request.command, "deny", "user", request.prefix_text)
            raise ToolError(f"The user denied this command ({why}); do not run it again; do the work another way "
                            "or tell the user what it needs.")
        if answer is Decision.ALLOW_ALWAYS and request.prefix:
            rule = PrefixRule(request.prefix, "allow")
            self._session.append(rule)
            if self.store is not None:
                self.store.add(self.user, request.prefix)
        self._decided(request.command, answer.value, "user", request.prefix_text)
        return grant

    def _decided(self, command: str, decision: str, by: str, prefix: str) -> None:
        if self.emit is not None:
            self.emit("approval.decided", {"command": command, "decision": decision, "by": by, "prefix": prefix})


__all__ = ["ALLOW_ONCE_TITLE", "DENY_TITLE", "AllowStore", "ApprovalGate", "ApprovalPolicy", "ApprovalRequest",
           "Approver", "Decision", "Grant", "PrefixRule", "always_title", "decision_for", "outside_writable",
           "parse_rules", "writable_dir_for"]


ALLOW_ONCE_TITLE = "Allow once"
DENY_TITLE = "Deny"


def always_title(request: ApprovalRequest) -> str:
    return f"Always allow `{request.prefix_text}`"


def decision_for(title: str | None, request: ApprovalRequest) -> Decision | None:
    """The decision a chosen action title stands for; None for no choice."""
    if title == ALLOW_ONCE_TITLE:
        return Decision.ALLOW_ONCE
    if title == always_title(request):
        return Decision.ALLOW_ALWAYS
    if title == DENY_TITLE:
        return Decision.DENY
    return None
