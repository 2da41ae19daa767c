"""Encodings of known secret values beyond base64, hex and percent-encoding; used by ``redact.py``.

Two kinds, chosen by cost:

* **Precomputed strings** (:func:`extra_forms`), searched with ``str.find`` like the base64 forms:
  base32, uuencode, base85 (Python's ``b85encode``) and ascii85, each at every byte alignment of
  the value inside a longer encoded blob, and UTF-16 / UTF-32 text of an ASCII value (``iconv``:
  NUL bytes between the characters).
* **Byte-token runs** decoded where they are found, because their separators and layout vary:
  C arrays (``0x73, 0x6b,`` also wrapped, as ``xxd -i`` prints them), ``\\x73`` / ``\\u0073`` /
  ``\\163`` escapes, HTML entities (``&#115;``, ``&#x73;``), decimal bytes (``od -An -tu1``,
  ``[115, 107]``), octal bytes (``od -An -b``), and blocks of uuencoded lines. A run is decoded
  to bytes and the caller's ``find`` says which decoded spans give a secret away; exactly the
  tokens behind them are replaced (a uuencoded block goes whole).

It also reads hex dump lines (``xxd``, ``hexdump -C``, ``od -tx1``) into the bytes they show
(:data:`DUMP_LINE`, :func:`dump_groups`, :func:`dump_bytes`), for ``Redactor`` to search.
"""

from __future__ import annotations

import base64
import binascii
import re
from collections.abc import Callable

from k1412_ls.text.secret_assignments import REDACTED

# Spans of a decoded run (its bytes as latin-1 text) that give a secret away.
Finder = Callable[[str], list[tuple[int, int]]]

_MIN_TOKENS = 6  # no known value is shorter than 6 bytes
_B64 = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/"
_UU = bytes(range(0x20, 0x60))
_TO_UU_SPACE = bytes.maketrans(_B64, _UU)  # Python's binascii.b2a_uu: a zero sextet is " "
_TO_UU_TICK = bytes.maketrans(_B64, b"`" + _UU[1:])  # GNU uuencode: a zero sextet is "`"


def _bit_cores(data: bytes, group: int, bits: int, encode: Callable[[bytes], bytes]) -> set[str]:
    """Characters of a bit-aligned encoding that depend only on ``data``, at each byte alignment in a group."""
    cores: set[str] = set()
    for offset in range(group):
        encoded = encode(b"\0" * offset + data + b"\0" * group).decode("ascii")
        cores.add(encoded[-(-8 * offset // bits):(8 * (offset + len(data))) // bits])
    return cores


def extra_forms(raw: str, data: bytes) -> set[str]:
    """Precomputed encodings of a value (``raw`` as text, ``data`` its UTF-8 bytes); short ones included."""
    forms = _bit_cores(data, 5, 5, base64.b32encode)
    for table in (_TO_UU_SPACE, _TO_UU_TICK):
        forms |= _bit_cores(data, 3, 6, lambda b, t=table: base64.b64encode(b).translate(t))
    for skip in range(4):  # base85 digits mix a whole 4-byte group: only whole groups of the value count
        chunk = data[skip:]
        chunk = chunk[:len(chunk) // 4 * 4]
        forms.add(base64.b85encode(chunk).decode("ascii"))
        forms.add(base64.a85encode(chunk).decode("ascii"))
    if raw.isascii():  # UTF-16 and UTF-32, either byte order: each character then 1 or 3 NUL bytes
        forms.add("\0".join(raw))
        forms.add("\0\0\0".join(raw))
    return forms


# --- byte-token runs ----------------------------------------------------------------------------------

# One byte or character written as a token: C hex (0x73), escapes (\\x73, \\u0073, \\U00000073, octal
# \\163; the backslash may be doubled, as in escaped JSON) and HTML entities (&#x73; &#115;).
_ESC_ONE = re.compile(r"0x(?P<byte>[0-9a-fA-F]{2})(?![0-9a-fA-F])"
                      r"|\\\\?(?:x(?P<xbyte>[0-9a-fA-F]{2})|u(?P<u4>[0-9a-fA-F]{4})|U(?P<u8>[0-9a-fA-F]{8})"
                      r"|(?P<oct>[0-3][0-7]{2}))|&#(?:[xX](?P<hexref>[0-9a-fA-F]{1,6})|(?P<decref>[0-9]{1,7}));?")
# Between tokens: blanks, one comma or semicolon, a line break and the next line's indentation.
_GAP = r"[ \t]{0,8}+(?:[,;][ \t]{0,8}+)?(?:\r?\n[ \t]{0,16}+)?"
# Runs of 6 or more tokens of one family; each pattern starts with a literal, so text without it costs
# one fast search.
_ESC_RUNS = tuple(re.compile(rf"{token}(?:{_GAP}{token}){{{_MIN_TOKENS - 1},}}") for token in (
    r"0x[0-9a-fA-F]{2}(?![0-9a-fA-F])",
    r"\\\\?(?:x[0-9a-fA-F]{2}|u[0-9a-fA-F]{4}|U[0-9a-fA-F]{8}|[0-3][0-7]{2})",
    r"&#(?:[xX][0-9a-fA-F]{1,6}|[0-9]{1,7});?",
))
# Bare numbers of at most 3 digits with a non-empty gap between them: od -An -tu1, od -An -b, lists.
_NUM_RUN = re.compile(rf"[0-9](?<![\w.][0-9])[0-9]{{0,2}}(?:(?=[ \t,;\r\n]){_GAP}[0-9]{{1,3}}(?![0-9])){{{_MIN_TOKENS - 1},}}")
_NUM = re.compile(r"[0-9]+")
_SMALL_TEXT = 2048  # shorter texts are searched for runs of numbers directly
# Digits are everywhere, so runs of numbers are first looked for in a copy of the text reduced to
# character classes (d digit, s blank/comma/semicolon, r and n line breaks, w word, p other), where the
# search can start from the literal "sd": a gap, then a number.
_CLASSES = bytes(
    ord("d") if 48 <= b <= 57 else ord("s") if chr(b) in " \t,;" else ord("r") if b == 13 else ord("n") if b == 10
    else ord("w") if chr(b).isalpha() or chr(b) in "_.?" else ord("p")
    for b in range(256)
)
_NUM_SHAPES = tuple(re.compile(rb"%sdd{0,2}(?:(?:s{1,17}|s{0,17}r?ns{0,16})dd{0,2}(?!d)){%d,}" % (first, _MIN_TOKENS - 2))
                    for first in (b"s", b"n"))  # a literal first: most positions are skipped by a fast search


def _escape_bytes(token: re.Match[str]) -> bytes:
    if token.group("byte") or token.group("xbyte"):
        return bytes.fromhex(token.group("byte") or token.group("xbyte"))
    if token.group("oct"):
        return bytes((int(token.group("oct"), 8) & 0xFF,))
    text = token.group("u4") or token.group("u8") or token.group("hexref")
    point = int(text, 16) if text else int(token.group("decref"))
    return chr(point).encode("utf-8", "surrogatepass") if point <= 0x10FFFF else b"?"


def _run_spans(tokens: list[tuple[int, int, bytes]], find: Finder) -> list[tuple[int, int]]:
    """Text spans of the tokens whose decoded bytes ``find`` reports (tokens: start, end, bytes)."""
    decoded = b"".join(data for _, _, data in tokens).decode("latin-1")
    hits = find(decoded)
    if not hits:
        return []
    owner: list[int] = []  # token index of each decoded character
    for index, (_, _, data) in enumerate(tokens):
        owner.extend([index] * len(data))
    return [(tokens[owner[lo]][0], tokens[owner[hi - 1]][1]) for lo, hi in hits if hi > lo]


def _number_windows(text: str) -> list[tuple[int, int]]:
    """Where in ``text`` runs of numbers may be: all of a short text, else around each run of the class copy."""
    if len(text) <= _SMALL_TEXT:
        return [(0, len(text))]
    classes = text.encode("ascii", "replace").translate(_CLASSES)  # one byte per character
    shapes = sorted((shape.start(), shape.end()) for pattern in _NUM_SHAPES for shape in pattern.finditer(classes))
    windows: list[tuple[int, int]] = []
    for start, end in shapes:
        if windows and start - 32 <= windows[-1][1]:
            windows[-1] = (windows[-1][0], max(end, windows[-1][1]))
        else:
            windows.append((max(0, start - 32), end))
    return windows


def token_run_spans(text: str, find: Finder) -> list[tuple[int, int]]:
    """Spans of ``text`` holding escaped, C-array, entity, decimal or octal bytes that ``find`` flags."""
    spans: list[tuple[int, int]] = []
    if "0x" in text or "\\" in text or "&#" in text:
        for pattern in _ESC_RUNS:
            for run in pattern.finditer(text):
                tokens = [(t.start(), t.end(), _escape_bytes(t)) for t in _ESC_ONE.finditer(text, run.start(), run.end())]
                spans.extend(_run_spans(tokens, find))
    for lo, hi in _number_windows(text):
        for run in _NUM_RUN.finditer(text, lo, hi):
            numbers = [(t.start(), t.end(), t.group()) for t in _NUM.finditer(text, run.start(), run.end())]
            if max(int(n) for _, _, n in numbers) < 256:  # decimal bytes
                spans.extend(_run_spans([(s, e, bytes((int(n),))) for s, e, n in numbers], find))
            if all(len(n) == 3 and n[0] in "0123" and "8" not in n and "9" not in n for _, _, n in numbers):
                spans.extend(_run_spans([(s, e, bytes((int(n, 8),))) for s, e, n in numbers], find))  # octal
    return spans


# uuencode: a full line holds 45 bytes ("M" and 60 characters); a value that crosses lines crosses a full
# one. The block is the run of full lines and the shorter line after it.
_UU_FULL = re.compile(r"\nM[ -`]{60}(?=\r?\n|\Z)")
_UU_LAST = re.compile(r"\n([!-L])([ -`]{4,60})(?=\r?\n|\Z)")


def uu_block_spans(text: str, find: Finder) -> list[tuple[int, int]]:
    """Spans (whole lines) of uuencoded blocks whose decoded bytes ``find`` flags."""
    if "\nM" not in text and not text.startswith("M"):
        return []
    lined = "\n" + text  # offsets in lined are one more than in text; a line is (its "\n", its end)
    blocks: list[list[tuple[int, int]]] = []
    for line in _UU_FULL.finditer(lined):
        end = blocks[-1][-1][1] if blocks else -2
        if line.start() == end or (line.start() == end + 1 and lined[end] == "\r"):
            blocks[-1].append((line.start(), line.end()))
        else:
            blocks.append([(line.start(), line.end())])
    spans: list[tuple[int, int]] = []
    for block in blocks:
        end = block[-1][1]
        last = _UU_LAST.match(lined, end + (lined.startswith("\r", end)))
        if last and len(last.group(2)) >= 4 * -(-(ord(last.group(1)) - 32) // 3):
            block.append((last.start(), last.end()))
        try:
            decoded = b"".join(binascii.a2b_uu(lined[lo + 1:hi]) for lo, hi in block).decode("latin-1")
        except (binascii.Error, ValueError):
            continue
        if find(decoded):
            spans.extend((lo, hi - 1) for lo, hi in block)  # lined[lo + 1:hi] is text[lo:hi - 1]
    return spans


# In a short text, one search says whether any run may be there at all.
_NUMBER_HINT = re.compile(r"[0-9][ \t,;\r\n]{1,40}[0-9]")


def byte_run_spans(text: str, find: Finder) -> list[tuple[int, int]]:
    """Spans of byte-token runs and uuencoded blocks in ``text`` whose decoded bytes ``find`` flags."""
    if len(text) <= _SMALL_TEXT and not ("0x" in text or "\\" in text or "&#" in text or "M" in text
                                         or _NUMBER_HINT.search(text)):
        return []
    return token_run_spans(text, find) + uu_block_spans(text, find)


def cut_lines(text: str, spans: list[tuple[int, int]]) -> str:
    """Replace merged ``spans`` of ``text`` with the marker, one per line piece; blanks and line breaks stay."""
    out: list[str] = []
    at = 0
    for lo, hi in spans:
        out.append(text[at:lo])
        pieces = text[lo:hi].split("\n")
        for index, piece in enumerate(pieces):
            core = piece.strip(" \t\r")
            if core:
                left = len(piece) - len(piece.lstrip(" \t\r"))
                out.append(piece[:left] + REDACTED + piece[left + len(core):])
            else:
                out.append(piece)
            if index < len(pieces) - 1:
                out.append("\n")
        at = hi
    out.append(text[at:])
    return "".join(out)


# One line of a hex dump with blanks between the groups (xxd, xxd -g1, hexdump, hexdump -C, od -tx1,
# od -An -tx1): an optional offset, 2 or more groups of 2-8 hex digits, then e.g. an ASCII column.
DUMP_GROUP = re.compile(r"([ \t]+)([0-9a-fA-F]+)")
DUMP_LINE = re.compile(  # matched against "\n" + text: the literal "\n" lets the engine skip ahead
    r"(?m)\n(?P<offset>(?:[ \t]*+[0-9a-fA-F]{6,16}:?)?)(?P<hex>(?:[ \t]{1,3}(?:[0-9a-fA-F]{2}){1,4}){2,64})"
    r"(?P<rest>[^\n]{0,256})$"
)


def dump_groups(hex_part: str) -> list[str]:
    """The hex groups of one dump line, without the start of an ASCII column that happens to look like hex.

    Groups have one width and one blank between them; a shorter group ends the line (the dump's
    last bytes); the only wider gap allowed is hexdump -C's, after eight single bytes.
    """
    tokens = hex_part.split()
    width = len(tokens[0])
    if " ".join(tokens) == hex_part.lstrip(" \t") and all(len(t) == width for t in tokens[:-1]) \
            and len(tokens[-1]) <= width and not width % 2 and not len(tokens[-1]) % 2:
        return tokens  # the common case: one blank between groups of one width
    groups: list[str] = []
    for token in DUMP_GROUP.finditer(hex_part):
        gap, group = token.group(1), token.group(2)
        if groups:
            width = len(groups[0])
            middle = len(groups) == 8 and width == 2 and gap == "  "
            if len(group) > width or (len(gap) > 1 and not middle):
                break
            if len(group) < width:
                groups.append(group)
                break
        if len(group) % 2:
            break
        groups.append(group)
    return groups


def dump_bytes(groups: list[str]) -> tuple[bytes, bytes]:
    """The bytes of one dump line's hex groups, as written and with 2-byte words swapped (hexdump)."""
    written = bytes.fromhex("".join(groups))
    swapped = bytes.fromhex("".join(g[2:4] + g[0:2] if len(g) == 4 else g for g in groups))
    return written, swapped
