"""One shell model for guards and gate: what a bash command line runs, and whose exit status counts.

Built on a real bash grammar (tree-sitter-bash), so quotes, here-documents,
subshells, ``-c`` strings, pipelines and ``&&``/``||``/``;``/``&`` mean what
bash makes them mean. :func:`parse_line` turns a line into its simple
commands, each with:

- ``words``: the literal words after quote removal (``None`` for a word built
  from an expansion, which cannot be known before it runs);
- ``reaches``: whether the command's exit status can become the line's exit
  status under ``bash -o pipefail -c``. It does not in ``a || b`` (``a``),
  ``a; b`` (``a``, unless ``set -e`` is on), ``a &``, ``! a``, conditions of
  ``if``/``while``, loop bodies, command substitutions and function bodies;
- ``stdin``, ``heredoc``, ``herestring`` and ``writes_to`` (redirections);
- ``nested``: commands found inside ``bash -c``/``sh -c``/``eval`` strings.

``ShellLine.tampered`` names anything that makes statuses or programs
untrustworthy: ``trap``, closing or moving descriptors with ``exec``,
``unset -f``, ``alias``, functions that shadow programs, ``PATH`` or
``BASH_ENV`` assignments. A line that does not parse cleanly is
``parsed = False``; callers fail closed on it.
"""

from __future__ import annotations

import functools
import re
from dataclasses import dataclass, field, replace

from tree_sitter import Node

from k1412_ls.shell.grammar import bash_parser
from k1412_ls.shell.words import (
    SHELLS,
    inline_script,
    is_pattern,
    is_statement,
    node_text,
    reads_script_from_input,
    strip_wrappers,
    word_value,
)

_STATEMENT_SEPARATORS = frozenset({";", "&", "\n", ";;"})
_ERREXIT = re.compile(r"^-[a-zA-Z]*e[a-zA-Z]*$")
_TAMPER_VARIABLES = frozenset({"PATH", "BASH_ENV", "ENV", "PROMPT_COMMAND", "SHELLOPTS", "BASHOPTS", "IFS"})
MAX_NESTING = 4


@dataclass(frozen=True)
class Simple:
    """One simple command of a line, as bash will run it."""

    words: tuple[str | None, ...]
    text: str
    reaches: bool
    stdin: bool = False
    heredoc: str | None = None
    herestring: str | None = None
    writes_to: tuple[str, ...] = ()
    nesting: int = 0  # 0 for the line itself, 1 inside a bash -c string, …
    stdout_to: str | None = None  # where standard output goes when redirected to a file
    background: bool = False  # started with ``&``: the line goes on without waiting for it
    patterns: tuple[int, ...] = ()  # indexes of words bash expands as patterns (braces, globs)
    assigned: tuple[str, ...] = ()  # variables assigned in front of the command (``LC_ALL=C sort``)

    @property
    def silenced(self) -> bool:
        """Whether its standard output is thrown away (``> /dev/null``)."""
        return self.stdout_to == "/dev/null"

    @property
    def argv(self) -> list[str]:
        """The words with unknown (expanded) words as empty strings."""
        return [w if w is not None else "" for w in self.words]

    @property
    def literal_argv(self) -> list[str]:
        """The words with every word that is not literal after parsing (an expansion, a brace or glob
        pattern) as an empty string: what approval rules may trust."""
        return ["" if w is None or i in self.patterns else w for i, w in enumerate(self.words)]

    @property
    def dynamic(self) -> bool:
        """Whether some word comes from an expansion."""
        return any(w is None for w in self.words)


@dataclass(frozen=True)
class ShellLine:
    """A parsed command line: its simple commands in source order and what makes it untrustworthy."""

    text: str
    commands: tuple[Simple, ...]
    parsed: bool
    tampered: str | None = None
    assignments: tuple[str, ...] = field(default=())  # variable names assigned anywhere in the line
    # (name, value) of every assignment in the line (prefix, export/declare, bare, nested ``bash -c``);
    # the value is None when it comes from an expansion.
    values: tuple[tuple[str, str | None], ...] = field(default=())


@dataclass
class _Redirects:
    heredoc: str | None = None
    herestring: str | None = None
    writes: list[str] = field(default_factory=list)
    stdout: str | None = None


class _Walker:
    """Collects simple commands with their status reach; one instance per parsed string."""

    def __init__(self, nesting: int) -> None:
        self.nesting = nesting
        self.commands: list[Simple] = []
        self.tampered: str | None = None
        self.assignments: list[str] = []
        self.values: list[tuple[str, str | None]] = []
        self.clean = True

    def taint(self, why: str) -> None:
        if self.tampered is None:
            self.tampered = why

    # --- statements ---------------------------------------------------------------------------
    def sequence(self, nodes: list[Node], reaches: bool) -> None:
        """Statements run one after another; only the last (or, under ``set -e``, each) reaches."""
        statements: list[tuple[Node, str]] = []
        for index, node in enumerate(nodes):
            if not node.is_named or node.type == "comment":
                continue
            follower = ""
            for later in nodes[index + 1:]:
                if later.is_named and later.type != "comment":
                    break
                if node_text(later) in _STATEMENT_SEPARATORS:
                    follower = node_text(later)
                    break
            statements.append((node, follower))
        errexit = False
        for position, (node, follower) in enumerate(statements):
            last = position == len(statements) - 1
            backgrounded = follower == "&"
            before = len(self.commands)
            self.statement(node, reaches and not backgrounded and (last or errexit))
            if backgrounded:
                self.commands[before:] = [replace(c, background=True) for c in self.commands[before:]]
            errexit = self._errexit_after(node, errexit)

    def _errexit_after(self, node: Node, current: bool) -> bool:
        if node.type != "command":
            return current
        words = [word_value(c) for c in node.children_by_field_name("argument")]
        name = node.child_by_field_name("name")
        if name is None or node_text(name) != "set":
            return current
        for index, word in enumerate(words):
            if word is None:
                continue
            if word in ("-o", "+o") and index + 1 < len(words) and words[index + 1] == "errexit":
                return word == "-o"
            if word.startswith("-") and _ERREXIT.match(word):
                current = True
            elif word.startswith("+") and "e" in word:
                current = False
        return current

    def statement(self, node: Node, reaches: bool, stdin: bool = False) -> None:
        kind = node.type
        if kind == "ERROR" or node.is_missing:
            self.clean = False
            return
        if node.has_error:
            self.clean = False
        if kind == "command":
            self.command(node, reaches, stdin)
        elif kind == "list":
            self.list_(node, reaches, stdin)
        elif kind == "pipeline":
            parts = [c for c in node.children if c.is_named and c.type != "comment"]
            for index, part in enumerate(parts):
                self.statement(part, reaches, stdin or index > 0)
        elif kind == "negated_command":
            for child in node.named_children:
                self.statement(child, False, stdin)
        elif kind in ("subshell", "compound_statement", "program", "do_group"):
            self.sequence(list(node.children), reaches)
        elif kind == "redirected_statement":
            self.redirected(node, reaches, stdin)
        elif kind == "if_statement":
            self.if_(node, reaches)
        elif kind in ("while_statement", "until_statement", "for_statement", "c_style_for_statement",
                      "case_statement", "select_statement"):
            for child in node.named_children:
                self.statement(child, False) if is_statement(child) else self.expressions(child)
        elif kind == "case_item":
            self.sequence(list(node.children), False)
        elif kind == "function_definition":
            name = node.child_by_field_name("name")
            self.taint(f"the line defines a function ({node_text(name) if name else '?'})")
            body = node.child_by_field_name("body")
            if body is not None:
                self.statement(body, False)
        elif kind in ("variable_assignment", "variable_assignments"):
            self.assignment(node)
            self.expressions(node)
        elif kind == "declaration_command":
            for child in node.named_children:
                if child.type == "variable_assignment":
                    self.assignment(child)
            self.expressions(node)
            self.commands.append(Simple(tuple(_declaration_words(node)), node_text(node), reaches,
                                        nesting=self.nesting))
        elif kind == "unset_command":
            words = [node_text(c) for c in node.named_children]
            if "-f" in words:
                self.taint("the line removes shell functions (unset -f)")
            self.commands.append(Simple(("unset", *words), node_text(node), reaches, nesting=self.nesting))
        elif kind == "test_command":
            self.expressions(node)
            self.commands.append(Simple(("[[",), node_text(node), reaches, stdin, nesting=self.nesting))
        elif is_statement(node):
            self.expressions(node)
        else:
            self.expressions(node)

    def list_(self, node: Node, reaches: bool, stdin: bool) -> None:
        children = [c for c in node.children if c.type != "comment"]
        operator = next((node_text(c) for c in children if not c.is_named), "&&")
        named = [c for c in children if c.is_named]
        if len(named) != 2:
            for child in named:
                self.statement(child, False, stdin)
            return
        left, right = named
        self.statement(left, reaches and operator == "&&", stdin)
        self.statement(right, reaches, stdin)

    def if_(self, node: Node, reaches: bool) -> None:
        condition_ids = {c.id for c in node.children_by_field_name("condition")}
        body: list[Node] = []
        for child in node.children:
            if child.id in condition_ids:
                if child.is_named:
                    self.statement(child, False)
            elif child.type in ("elif_clause", "else_clause"):
                self.clause(child, reaches)
            else:
                body.append(child)
        self.sequence(body, reaches)

    def clause(self, node: Node, reaches: bool) -> None:
        condition_ids = {c.id for c in node.children_by_field_name("condition")}
        body = []
        for child in node.children:
            if child.id in condition_ids:
                if child.is_named:
                    self.statement(child, False)
            else:
                body.append(child)
        self.sequence(body, reaches)

    def redirected(self, node: Node, reaches: bool, stdin: bool) -> None:
        found = _Redirects()
        for redirect in node.children_by_field_name("redirect"):
            stdin = self.redirect(redirect, found) or stdin
        body = node.child_by_field_name("body")
        if body is None:
            return
        before = len(self.commands)
        self.statement(body, reaches, stdin)
        for index in range(before, len(self.commands)):
            simple = self.commands[index]
            if index > before and body.type == "command":
                break
            self.commands[index] = Simple(
                simple.words, node_text(node) if body.type == "command" else simple.text, simple.reaches,
                simple.stdin or stdin, simple.heredoc if found.heredoc is None else found.heredoc,
                simple.herestring if found.herestring is None else found.herestring,
                simple.writes_to + tuple(found.writes), simple.nesting,
                found.stdout if found.stdout is not None else simple.stdout_to, simple.background,
                simple.patterns, simple.assigned)

    def redirect(self, redirect: Node, found: _Redirects) -> bool:
        """Record one redirection; True when it gives the command standard input."""
        stdin = False
        if redirect.type == "heredoc_redirect":
            body = next((c for c in redirect.named_children if c.type == "heredoc_body"), None)
            found.heredoc = node_text(body) if body is not None else ""
            for child in redirect.named_children:
                if child.type in ("file_redirect", "herestring_redirect"):
                    self.redirect(child, found)
                elif is_statement(child):
                    self.statement(child, False)
            return True
        if redirect.type == "herestring_redirect":
            target = redirect.named_children[-1] if redirect.named_children else None
            found.herestring = word_value(target) if target is not None else None
            self.expressions(redirect)
            return True
        if redirect.type != "file_redirect":
            return False
        operator = next((node_text(c) for c in redirect.children if not c.is_named), "")
        destination = redirect.child_by_field_name("destination")
        target = word_value(destination) if destination is not None else None
        descriptor = redirect.child_by_field_name("descriptor")
        fd = node_text(descriptor) if descriptor is not None else ""
        if fd not in ("", "0", "1", "2"):
            self.taint("the line redirects a file descriptor other than stdin, stdout or stderr")
        if "&" in operator and operator not in ("&>", "&>>") and target not in ("1", "2"):
            self.taint("the line redirects or closes a file descriptor")
        if "<" in operator and ">" not in operator:
            stdin = True
        elif ">" in operator and target is not None and "&" not in operator.replace("&>", ""):
            found.writes.append(target)
            if fd in ("", "1") or operator.startswith("&>"):
                found.stdout = target
        if destination is not None:
            self.expressions(destination)
        return stdin

    def assignment(self, node: Node) -> None:
        name = node.child_by_field_name("name")
        if name is None:
            return
        variable = node_text(name)
        self.assignments.append(variable)
        value = node.child_by_field_name("value")
        self.values.append((variable, word_value(value) if value is not None else ""))
        if variable in _TAMPER_VARIABLES:
            self.taint(f"the line sets {variable}")

    def expressions(self, node: Node) -> None:
        """Commands hidden in arguments: command and process substitutions never reach."""
        for child in node.children:
            if child.type in ("command_substitution", "process_substitution"):
                self.sequence(list(child.children), False)
            elif child.child_count:
                self.expressions(child)

    def command(self, node: Node, reaches: bool, stdin: bool) -> None:
        words: list[str | None] = []
        patterns: list[int] = []
        assigned: list[str] = []
        for child in node.children:
            field_name = _field_of(node, child)
            if child.type == "variable_assignment":
                self.assignment(child)
                self.expressions(child)
                name = child.child_by_field_name("name")
                assigned.append(node_text(name) if name is not None else "")
                continue
            if child.type == "file_redirect":
                continue
            if field_name == "name" or child.type == "command_name":
                inner = child.named_children[0] if child.named_children else child
                if is_pattern(inner):
                    patterns.append(len(words))
                words.append(word_value(inner))
                self.expressions(child)
            elif field_name == "argument" or child.is_named:
                if is_pattern(child):
                    patterns.append(len(words))
                words.append(word_value(child))
                self.expressions(child)
        if not words:
            return
        simple = Simple(tuple(words), node_text(node), reaches, stdin, nesting=self.nesting, patterns=tuple(patterns),
                        assigned=tuple(assigned))
        self.commands.append(simple)
        self.inspect(simple)

    def inspect(self, simple: Simple) -> None:
        """Tampering and nested command strings (``bash -c``, ``eval``)."""
        argv = strip_wrappers(simple.argv)
        if not argv:
            return
        program = argv[0].rsplit("/", 1)[-1]
        if program == "trap":
            self.taint("the line sets a trap")
        elif program in ("alias", "enable", "hash"):
            self.taint(f"the line uses {program}")
        elif program == "exec" and len(argv) == 1:
            self.taint("the line redirects the shell itself with exec")
        elif program == "shopt" and any(a in ("extdebug", "-s", "-u") for a in argv[1:]) and "extdebug" in argv:
            self.taint("the line changes how shell functions and traps behave (shopt extdebug)")
        elif program == "set" and any(a == "+o" for a in argv[1:]) and "pipefail" in argv:
            self.taint("the line turns pipefail off (set +o pipefail), hiding failures inside pipelines")
        if program in SHELLS and inline_script(argv) == "" and not _literal_script(simple):
            self.taint(f"the line gives {program} -c a script built at run time")
        if program in SHELLS and inline_script(argv) is None and reads_script_from_input(argv):
            self.taint(f"the line feeds {program} a script the parser cannot read (from a pipe or input)")
        elif program == "eval" and simple.dynamic:
            self.taint("the line evaluates text it builds at run time (eval of an expansion)")
        elif program in (".", "source") and len(argv) > 1 and (not argv[1] or argv[1].startswith(("/dev/", "/proc/"))):
            self.taint(f"the line sources a script the parser cannot read ({program} {argv[1] or '$…'})")
        if any(w and ("/proc/self/fd" in w or "/dev/fd/" in w) for w in argv[1:]):
            self.taint("the line names its own file descriptors (/proc/self/fd, /dev/fd)")
        if program in ("declare", "typeset") and any(a.startswith("-") and "f" in a for a in argv[1:]):
            self.taint("the line reads or changes shell function definitions (declare -f)")
        if program in SHELLS or program == "eval":
            script = inline_script(argv) if program in SHELLS else " ".join(argv[1:])
            if script is not None and self.nesting < MAX_NESTING:
                inner = parse_line(script, nesting=self.nesting + 1)
                if not inner.parsed:
                    self.clean = False
                if inner.tampered:
                    self.taint(inner.tampered)
                self.values.extend(inner.values)
                for nested in inner.commands:
                    self.commands.append(Simple(nested.words, nested.text, nested.reaches and simple.reaches,
                                                nested.stdin, nested.heredoc, nested.herestring, nested.writes_to,
                                                nested.nesting, nested.stdout_to or simple.stdout_to,
                                                nested.background, nested.patterns, nested.assigned))
            elif program == "eval":
                self.clean = False


def _literal_script(simple: Simple) -> bool:
    """Whether the ``-c`` script of a shell command is a literal (possibly empty) word."""
    argv = simple.argv
    for index, word in enumerate(argv):
        if word == "" and simple.words[index] is None and index > 0 and argv[index - 1].startswith("-") \
                and "c" in argv[index - 1]:
            return False
    return True


def _field_of(parent: Node, child: Node) -> str | None:
    for index, candidate in enumerate(parent.children):
        if candidate.id == child.id:
            return parent.field_name_for_child(index)
    return None


def _declaration_words(node: Node) -> list[str | None]:
    words: list[str | None] = []
    for child in node.children:
        if not child.is_named:
            words.append(node_text(child))
        elif child.type == "variable_assignment":
            words.append(node_text(child))
        else:
            words.append(word_value(child))
    return words


MAX_CACHED_CHARS = 16_384
# Descriptor tables in any spelling a line can reach them by: /proc/self/fd, /proc/$$/fd, /proc/$BASHPID/fd,
# /proc/123/fd, /proc/*/fdinfo, /proc/thread-self/fd, /dev/fd. Checked on the whole text (loop words and
# redirection targets included), so the descriptor K1412 reads statuses from cannot be found and written to.
OWN_DESCRIPTORS = re.compile(r"/proc/+[^/\s;|&]*/+(?:task/+[^/\s;|&]*/+)?fd(?:info)?\b|/dev/+fd\b")


def parse_line(command: str, nesting: int = 0) -> ShellLine:
    """The simple commands of ``command`` with their status reach (short lines are cached: they repeat)."""
    if len(command) <= MAX_CACHED_CHARS:
        return _parse_cached(command, nesting)
    return _parse(command, nesting)


@functools.lru_cache(maxsize=512)
def _parse_cached(command: str, nesting: int) -> ShellLine:
    return _parse(command, nesting)


def _parse(command: str, nesting: int) -> ShellLine:
    tree = bash_parser().parse(command.encode("utf-8", "surrogatepass"))
    walker = _Walker(nesting)
    root = tree.root_node
    if OWN_DESCRIPTORS.search(command):
        walker.taint("the line names its own file descriptors (/proc/…/fd, /dev/fd)")
    walker.sequence(list(root.children), True)
    parsed = walker.clean and not root.has_error
    return ShellLine(command, tuple(walker.commands), parsed, walker.tampered, tuple(walker.assignments),
                     tuple(walker.values))


_ATOMS = frozenset({"string", "raw_string", "ansi_c_string", "heredoc_body", "word", "number", "concatenation",
                    "simple_expansion", "expansion", "command_substitution", "translated_string"})


def normalized_text(command: str) -> str:
    """A line's identity: its tokens (quoted words kept whole) joined by single spaces, so whitespace
    differences vanish and nothing else does; a line that does not parse is only whitespace-collapsed."""
    if not parse_line(command).parsed:
        return " ".join(command.split())
    tree = bash_parser().parse(command.encode("utf-8", "surrogatepass"))
    tokens: list[str] = []
    stack = [tree.root_node]
    while stack:
        node = stack.pop()
        if node.type in _ATOMS or node.child_count == 0:
            text = node_text(node)
            if text.strip():
                tokens.append(text if node.type == "heredoc_body" else text.strip())
            continue
        stack.extend(reversed(node.children))
    return " ".join(tokens)
