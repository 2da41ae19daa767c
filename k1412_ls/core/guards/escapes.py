"""Decoding doubly-escaped newlines that weak models put in source text.

A weak model sometimes escapes a file twice, so ``content`` arrives as one
line holding literal ``\\n`` sequences (``import os\\nprint(1)\\n``). Decoding
is applied only when it is unambiguous; otherwise the text is left exactly as
it came. The rule (every condition must hold):

1. the text has no real line break and at least two literal ``\\n``
   sequences (one sequence is how a one-line ``print("a\\nb")`` looks);
2. the target is a text file we recognise (by suffix or well-known name);
3. the decoded text is plausible for that target:

   - Python (whole file): the decoded text parses, and the original is not
     already valid Python whose ``\\n`` sequences all sit inside string
     literals (``s = \"\"\"a\\nb\\nc\"\"\"`` stays as written);
   - JSON / TOML (whole file): the decoded text parses;
   - other code, and fragments (``patch_file`` edits): every decoded line
     break falls outside quotes, so no string literal is split;
   - prose (Markdown, plain text): no further check;
   - patches (``apply_patch``, unified diffs): a one-line patch is never
     valid, so the header decides.

Two decodings exist. *Layout*: only unescaped ``\\n``, ``\\r\\n`` and ``\\t``
become real characters; everything else (``\\\\``, ``\\"``) stays. *Full*: one
whole JSON-style escape layer is removed (``\\\\`` ``\\"`` ``\\n`` ``\\t`` …),
considered only when the text has no bare double quote, i.e. every quote was
escaped along with the newlines. Validated targets try full first, then
layout; others use full only when escaped quotes are present.
"""

from __future__ import annotations

import ast
import io
import json
import tokenize
import tomllib
from collections.abc import Callable
from pathlib import PurePosixPath

PYTHON_SUFFIXES = frozenset({".py", ".pyi", ".pyw"})
PROSE_SUFFIXES = frozenset({".md", ".markdown", ".rst", ".txt", ".adoc", ".org", ".tex"})
CODE_SUFFIXES = frozenset({
    ".js", ".mjs", ".cjs", ".ts", ".tsx", ".jsx", ".sh", ".bash", ".zsh", ".fish", ".rb", ".pl", ".php",
    ".lua", ".r", ".jl", ".go", ".rs", ".c", ".h", ".cc", ".cpp", ".hpp", ".cxx", ".java", ".kt", ".kts",
    ".scala", ".swift", ".cs", ".fs", ".hs", ".ml", ".ex", ".exs", ".erl", ".clj", ".sql", ".css", ".scss",
    ".less", ".html", ".htm", ".xml", ".svg", ".vue", ".svelte", ".yaml", ".yml", ".ini", ".cfg", ".conf",
    ".env", ".mk", ".cmake", ".gradle", ".dart", ".zig", ".nim", ".vim", ".ps1", ".bat", ".csv", ".tsv",
    ".gitignore", ".dockerignore", ".editorconfig",
})
TEXT_NAMES = frozenset({
    "makefile", "dockerfile", "gemfile", "rakefile", "procfile", "vagrantfile", "justfile", "readme",
    "license", "changelog", "authors", "notice", "copying", ".gitignore", ".dockerignore", ".env",
})
_VALIDATORS: dict[str, Callable[[str], object]] = {".json": json.loads, ".toml": tomllib.loads}
_FULL_ESCAPES = {"\\": "\\", "n": "\n", "t": "\t", '"': '"', "'": "'", "/": "/"}


def count_literal_newlines(text: str) -> int:
    """Number of ``\\n`` sequences whose backslash is not itself escaped."""
    count = 0
    index = 0
    while index < len(text):
        if text[index] == "\\" and index + 1 < len(text):
            if text[index + 1] == "n":
                count += 1
            index += 2
            continue
        index += 1
    return count


def _decode(text: str, full: bool) -> tuple[str, list[int]]:
    """Decode one layer; return the text and the offsets of the line breaks it created."""
    out: list[str] = []
    breaks: list[int] = []
    index = 0
    length = 0
    while index < len(text):
        char = text[index]
        nxt = text[index + 1] if index + 1 < len(text) else ""
        if char != "\\" or not nxt:
            out.append(char)
            length += 1
            index += 1
            continue
        if nxt == "r" and text[index + 2:index + 4] == "\\n":
            nxt, index = "n", index + 2  # \r\n collapses to one line break
        if nxt == "n":
            breaks.append(length)
            out.append("\n")
            length += 1
        elif nxt == "t":
            out.append("\t")
            length += 1
        elif full and nxt in _FULL_ESCAPES:
            out.append(_FULL_ESCAPES[nxt])
            length += 1
        else:
            out.append(char + nxt)
            length += 2
        index += 2
    return "".join(out), breaks


def _has_bare_double_quote(text: str) -> bool:
    index = 0
    while index < len(text):
        if text[index] == "\\":
            index += 2
            continue
        if text[index] == '"':
            return True
        index += 1
    return False


def _breaks_outside_quotes(decoded: str, breaks: list[int]) -> bool:
    """True when no created line break falls inside a quoted string (comments are skipped)."""
    wanted = set(breaks)
    quote = ""
    index = 0
    while index < len(decoded):
        char = decoded[index]
        if index in wanted and quote:
            return False
        if char == "\\":
            index += 2
            continue
        if quote:
            if char == quote:
                quote = ""
        elif char in "\"'`":
            quote = char
        elif char == "#" or decoded.startswith("//", index):
            # A comment runs to the end of the line; apostrophes in it are not quotes.
            end = decoded.find("\n", index)
            if end == -1:
                return True
            index = end
            continue
        index += 1
    return True


def _python_escapes_only_in_strings(text: str) -> bool:
    """True when ``text`` is valid Python and every literal ``\\n`` lies inside a string literal."""
    try:
        ast.parse(text)
        tokens = list(tokenize.generate_tokens(io.StringIO(text).readline))
    except (SyntaxError, ValueError, tokenize.TokenError):
        return False
    spans = [(tok.start[1], tok.end[1]) for tok in tokens if tok.type == tokenize.STRING and tok.start[0] == 1]
    index = 0
    while index < len(text):
        if text[index] == "\\" and index + 1 < len(text):
            if text[index + 1] == "n" and not any(start <= index < end for start, end in spans):
                return False
            index += 2
            continue
        index += 1
    return True


def _parses(validator: Callable[[str], object], text: str) -> bool:
    try:
        validator(text)
    except (SyntaxError, ValueError, tomllib.TOMLDecodeError):
        return False
    return True


def target_kind(path: str | None) -> str | None:
    """``python``, ``json``, ``toml``, ``prose``, ``code`` or None for a file we do not treat as text."""
    if not path:
        return None
    name = PurePosixPath(path.replace("\\", "/")).name.lower()
    suffix = PurePosixPath(name).suffix
    if suffix in PYTHON_SUFFIXES:
        return "python"
    if suffix in _VALIDATORS:
        return suffix[1:]
    if suffix in PROSE_SUFFIXES:
        return "prose"
    if suffix in CODE_SUFFIXES or name in TEXT_NAMES or name.startswith("dockerfile"):
        return "code"
    return None


def _candidate_modes(text: str, validated: bool) -> list[bool]:
    full_possible = not _has_bare_double_quote(text)
    if validated:
        return [True, False] if full_possible else [False]
    return [full_possible and '\\"' in text]


def decode_source_text(text: str, path: str | None, *, fragment: bool = False) -> str:
    """``text`` with one escape layer removed when the rule above says it is unambiguous."""
    if "\n" in text or "\r" in text or count_literal_newlines(text) < 2:
        return text
    kind = target_kind(path)
    if kind is None:
        return text
    if kind == "python" and not fragment:
        if _python_escapes_only_in_strings(text):
            return text
        for full in _candidate_modes(text, validated=True):
            decoded, _ = _decode(text, full)
            if _parses(ast.parse, decoded):
                return decoded
        return text
    if kind in _VALIDATORS and not fragment:
        for full in _candidate_modes(text, validated=True):
            decoded, _ = _decode(text, full)
            if _parses(_VALIDATORS[kind], decoded):
                return decoded
        return text
    decoded, breaks = _decode(text, _candidate_modes(text, validated=False)[0])
    if kind == "prose" or _breaks_outside_quotes(decoded, breaks):
        return decoded
    return text


def decode_edit_pair(old_text: str, new_text: str, path: str | None) -> tuple[str, str]:
    """Decode a ``patch_file`` edit's two fragments together, or leave both as they are.

    Neither may hold a real line break, both must keep their quotes intact
    after decoding, they share one decoding mode, and together they must
    hold at least two literal ``\\n`` sequences.
    """
    texts = [old_text, new_text]
    escaped = [t for t in texts if count_literal_newlines(t)]
    if not escaped or sum(count_literal_newlines(t) for t in texts) < 2:
        return old_text, new_text
    if any("\n" in t or "\r" in t for t in texts):  # real line breaks: this pair was not escaped twice
        return old_text, new_text
    kind = target_kind(path)
    if kind is None:
        return old_text, new_text
    joined = "".join(texts)
    full = not _has_bare_double_quote(joined) and '\\"' in joined
    out: list[str] = []
    for text in texts:
        decoded, breaks = _decode(text, full)
        if kind != "prose" and not _breaks_outside_quotes(decoded, breaks):
            return old_text, new_text
        out.append(decoded)
    return out[0], out[1]


def decode_patch_text(text: str, *, unified: bool) -> str:
    """Decode a one-line patch: a patch without real line breaks can never apply as written."""
    if "\n" in text or "\r" in text or count_literal_newlines(text) < 2:
        return text
    head = text.lstrip()
    if unified:
        if not head.startswith(("--- ", "diff ", "@@", "Index: ")):
            return text
    elif not head.startswith("*** Begin Patch"):
        return text
    full = not _has_bare_double_quote(text) and '\\"' in text
    decoded, _ = _decode(text, full)
    return decoded
