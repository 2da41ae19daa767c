"""What a command line does, as the approval policy reads it: its commands, what they reach, what they write.

Pure functions over the shell model's words (``k1412_ls.shell``): the program
and sub-command a rule matches (wrappers, git's global options and aliases
seen through), commands run from arguments (``find -exec``, ``env -S``,
``script -c``), whether a command needs the network, writes ``.git``, writes
paths, or only reads.
"""

from __future__ import annotations

import re

from k1412_ls.shell.parse import parse_line
from k1412_ls.shell.words import git_subcommand, git_subcommand_index, program_name, strip_wrappers
from k1412_ls.tools.approval.inspection import READERS, is_inspection

# Programs that may be inspection (their options decide: ``tools.approval.inspection``).
READ_ONLY_PROGRAMS = frozenset({*READERS, "git", "find", "sed", "awk"})
# Sub-commands that reach the network (asked about while the network is off).
NETWORK_COMMANDS: dict[str, frozenset[str] | None] = {
    "pip": frozenset({"install", "download", "wheel", "index"}),
    "pip3": frozenset({"install", "download", "wheel", "index"}),
    "uv": frozenset({"pip", "add", "sync", "lock", "tool", "venv"}),
    "poetry": frozenset({"install", "add", "update", "lock"}),
    "npm": frozenset({"install", "i", "ci", "add", "update", "publish", "view", "exec"}),
    "npx": None, "pnpm": frozenset({"install", "i", "add", "update", "dlx"}),
    "yarn": frozenset({"install", "add", "upgrade", "dlx"}),
    "cargo": frozenset({"fetch", "install", "update", "publish", "search"}),
    "go": frozenset({"get", "install", "mod"}),
    "git": frozenset({"clone", "fetch", "pull", "push", "ls-remote", "submodule"}),
    "curl": None, "wget": None, "ssh": None, "scp": None, "sftp": None, "rsync": None, "nc": None,
    "ncat": None, "telnet": None, "ftp": None, "apt": None, "apt-get": None, "gem": frozenset({"install"}),
    "conda": frozenset({"install", "create", "update"}), "docker": frozenset({"pull", "push", "run", "build"}),
}
# git sub-commands that write .git (asked about while .git is read-only).
GIT_WRITES = frozenset({
    "add", "commit", "checkout", "switch", "restore", "merge", "rebase", "reset", "stash", "tag", "branch",
    "cherry-pick", "revert", "am", "apply", "mv", "rm", "pull", "fetch", "clean", "gc", "notes", "worktree",
    "config", "update-index", "update-ref", "init",
})

# Programs whose path arguments are written to: every argument, or only the last (the destination).
_WRITES_EVERY_ARG = frozenset({"touch", "mkdir", "rm", "rmdir", "tee", "truncate", "chmod", "chown", "shred"})
_WRITES_LAST_ARG = frozenset({"cp", "mv", "install", "ln", "rsync"})


def written_paths(words: list[str], redirects: tuple[str, ...]) -> list[str]:
    """The paths a simple command writes, as far as its words and redirections say."""
    found = list(redirects)
    if words:
        args = [w for w in words[1:] if w and not w.startswith("-")]
        if words[0] in _WRITES_EVERY_ARG:
            found += args
        elif words[0] in _WRITES_LAST_ARG and len(args) >= 2:
            found.append(args[-1])
    return found


def command_words(simple_words: list[str]) -> list[str]:
    """A simple command's words as rules see them.

    Wrappers (``env``, ``timeout``, ``xargs``) removed, the program by name
    (``/usr/bin/git`` → ``git``), and git's global options (``-C dir``, ``-c
    k=v``) moved out of the way, so ``git -c x=y push`` meets a ``git push`` rule.
    """
    words = strip_wrappers(simple_words)
    if not words:
        return words
    words = [program_name(words[0]), *words[1:]]
    if words[0].startswith("git-") and "/git-core/" in simple_words[len(simple_words) - len(words)]:
        words = ["git", words[0][len("git-"):], *words[1:]]  # /usr/lib/git-core/git-push → git push
    if words[0] == "git":
        sub = git_subcommand(words[1:])
        at = 1 + git_subcommand_index(words[1:])
        if at < len(words):  # a sub-command, literal or not ("")
            aliases = _git_aliases(words[1:at])
            if sub in aliases:  # git -c alias.p=push p → git push
                expanded = [w for s in parse_line(aliases[sub], nesting=1).commands for w in s.argv][:8]
                return ["git", *expanded, *words[at + 1:]] if expanded else ["git", sub, *words[at + 1:]]
            words = ["git", sub, *words[at + 1:]]
    return words


def _git_aliases(options: list[str]) -> dict[str, str]:
    """``-c alias.NAME=VALUE`` settings among git's global options."""
    found: dict[str, str] = {}
    for index, word in enumerate(options[:-1]):
        if word == "-c" and options[index + 1].lower().startswith("alias.") and "=" in options[index + 1]:
            name, value = options[index + 1][len("alias."):].split("=", 1)
            found[name] = value.lstrip("!")
    return found


MAX_SUBSTITUTIONS = 32


def embedded_commands(argv: list[str]) -> list[list[str]]:
    """Commands a simple command runs from its arguments.

    ``find … -exec CMD ;`` → ``CMD``; ``env -S 'CMD ARGS'`` → ``CMD ARGS``.
    """
    found: list[list[str]] = []
    for index, word in enumerate(argv[:-1]):
        if program_name(argv[0]) == "env" and word in ("-S", "--split-string"):
            for simple in parse_line(argv[index + 1], nesting=1).commands:
                found.append(command_words(simple.argv))
        elif program_name(argv[0]) == "script" and word.startswith("-") and not word.startswith("--") \
                and word.endswith("c"):
            for simple in parse_line(argv[index + 1], nesting=1).commands:
                found.append(command_words(simple.argv))
        elif word == "--command" and program_name(argv[0]) == "script":
            for simple in parse_line(argv[index + 1], nesting=1).commands:
                found.append(command_words(simple.argv))
        elif word.startswith("--split-string="):
            for simple in parse_line(word.split("=", 1)[1], nesting=1).commands:
                found.append(command_words(simple.argv))
    words = command_words(argv)
    if words and words[0] == "find":
        for index, word in enumerate(words):
            if word in ("-exec", "-execdir", "-ok", "-okdir"):
                rest = words[index + 1:]
                end = next((i for i, w in enumerate(rest) if w in (";", "+")), len(rest))
                if rest[:end]:
                    found.append(command_words(rest[:end]))
    return found


def started_by_xargs(argv: list[str]) -> bool:
    """Whether ``xargs`` is among the wrappers in front of a simple command's program."""
    stripped = len(strip_wrappers(argv))
    return any(program_name(word) == "xargs" for word in argv[:len(argv) - stripped])


def generalized_prefix(words: list[str]) -> tuple[str, ...]:
    """The prefix "always allow" covers: the program and its sub-command (``git push origin`` → ``git push``)."""
    if not words:
        return ()
    prefix = [words[0]]
    for word in words[1:2]:
        if word and word[0].isalpha() and all(c.isalnum() or c in "-_:" for c in word):
            prefix.append(word)
    return tuple(prefix)


def _subcommand(words: list[str]) -> str:
    if not words:
        return ""
    if words[0] == "git":
        return git_subcommand(words[1:])
    for word in words[1:]:
        if not word.startswith("-"):
            return word
    return ""


def needs_network(words: list[str]) -> bool:
    if not words:
        return False
    program = words[0]
    if program in {"python", "python3"} and len(words) > 2 and words[1] == "-m":
        words = words[2:]
        program = words[0]
    if program not in NETWORK_COMMANDS:
        return False
    subs = NETWORK_COMMANDS[program]
    return subs is None or _subcommand(words) in subs


def writes_git(words: list[str]) -> bool:
    return bool(words) and words[0] == "git" and git_subcommand(words[1:]) in GIT_WRITES


# Wrappers that change nothing about what the wrapped reader does, and variables a reader may be given.
_INERT_WRAPPERS = frozenset({"env", "timeout", "nice", "time", "command", "builtin", "exec", "stdbuf"})
_INERT_VARIABLES = re.compile(r"^(?:LC_[A-Z]+|LANG|LANGUAGE|TZ|COLUMNS|LINES|NO_COLOR|TERM|GREP_COLORS?)=")


def read_only(words: list[str], raw: list[str] | None = None, argv: list[str] | None = None) -> bool:
    """Whether a command is inspection: on the allow list of (program, options) that only read and print
    (``tools.approval.inspection``), run through no wrapper but the inert ones, with no variable but the
    inert ones (``LD_PRELOAD=… cat`` is not inspection)."""
    if not words:
        return True
    if argv is not None and raw is not None:
        for word in argv[:len(argv) - len(raw)]:
            if "=" in word and not word.startswith("-") and re.match(r"^[A-Za-z_][A-Za-z0-9_]*=", word):
                if not _INERT_VARIABLES.match(word):
                    return False
            elif not word.startswith("-") and program_name(word) not in _INERT_WRAPPERS \
                    and not word.replace(".", "").isdigit() and not word[:-1].replace(".", "").isdigit():
                return False
    written = raw if raw else words
    return is_inspection([program_name(written[0]), *written[1:]])


# git's own commands: a sub-command not among them is an alias (from any config the repository, the user or an
# earlier command can write) or a git-* program on PATH, so what it runs is unknown to the rules.
GIT_COMMANDS = frozenset("""
add am annotate apply archive bisect blame branch bugreport bundle cat-file check-attr check-ignore check-mailmap
check-ref-format checkout checkout-index cherry cherry-pick citool clean clone column commit commit-graph commit-tree
config count-objects credential credential-cache credential-store daemon describe diagnose diff diff-files
diff-index diff-tree difftool fast-export fast-import fetch fetch-pack filter-branch fmt-merge-msg for-each-ref
for-each-repo format-patch fsck fsck-objects gc get-tar-commit-id grep gui hash-object help hook http-backend
http-fetch http-push imap-send index-pack init init-db instaweb interpret-trailers log ls-files ls-remote ls-tree
mailinfo mailsplit maintenance merge merge-base merge-file merge-index merge-octopus merge-one-file merge-ours
merge-recursive merge-resolve merge-subtree merge-tree mergetool mktag mktree multi-pack-index mv name-rev notes
p4 pack-objects pack-redundant pack-refs patch-id prune prune-packed pull push quiltimport range-diff read-tree
rebase receive-pack reflog remote repack replace request-pull rerere reset restore rev-list rev-parse revert rm
send-email send-pack shortlog show show-branch show-index show-ref sparse-checkout stage stash status stripspace
submodule subtree svn switch symbolic-ref tag unpack-file unpack-objects update-index update-ref
update-server-info upload-archive upload-pack var verify-commit verify-pack verify-tag version whatchanged
worktree write-tree
""".split())
# git's push family: sub-commands that publish to a remote as ``git push`` does (rules for ``git push`` meet them).
# ``remote-*`` are the transport helpers (``git remote-ext`` also runs a command); ``bundle`` is not in it: it
# writes a local file, and sending that file on is another command the rules see.
GIT_PUSH_FAMILY = frozenset({"push", "send-pack", "http-push"})


def rule_views(words: list[str]) -> list[list[str]]:
    """``words`` and the equivalent ``git push …`` when the command is a member of git's push family."""
    if len(words) < 2 or words[0] != "git":
        return [words]
    sub = words[1]
    if sub in GIT_PUSH_FAMILY or sub.startswith("remote-"):
        return [words, ["git", "push", *words[2:]]]
    if words[1:3] in (["subtree", "push"], ["svn", "dcommit"], ["p4", "submit"], ["lfs", "push"]):
        return [words, ["git", "push", *words[3:]]]
    return [words]


__all__ = ["GIT_COMMANDS", "GIT_PUSH_FAMILY", "GIT_WRITES", "MAX_SUBSTITUTIONS", "NETWORK_COMMANDS",
           "READ_ONLY_PROGRAMS", "command_words", "embedded_commands", "generalized_prefix", "needs_network",
           "read_only", "rule_views", "started_by_xargs", "writes_git", "written_paths"]
