"""The bash grammar (tree-sitter-bash), loaded once, and what can be read off a tree without walking it."""

from __future__ import annotations

import functools

import tree_sitter_bash
from tree_sitter import Language, Parser

from k1412_ls.shell.words import node_text


@functools.lru_cache(maxsize=1)
def bash_parser() -> Parser:
    return Parser(Language(tree_sitter_bash.language()))


_SUBSTITUTIONS = frozenset({"command_substitution", "process_substitution"})


def substitution_scripts(command: str) -> list[str]:
    """The scripts inside ``$( )``, backticks, ``<( )`` and ``>( )`` of a line, outermost first.

    They run as part of the line; the approval check looks at them as lines of
    their own (the status model does not: their statuses never reach the line).
    """
    tree = bash_parser().parse(command.encode("utf-8", "surrogatepass"))
    found: list[str] = []
    stack = [tree.root_node]
    while stack:
        node = stack.pop()
        if node.type in _SUBSTITUTIONS:
            inner = [node_text(child) for child in node.children if child.is_named]
            if inner:
                found.append("\n".join(inner))
        stack.extend(reversed(node.children))
    return found


__all__ = ["bash_parser", "substitution_scripts"]
