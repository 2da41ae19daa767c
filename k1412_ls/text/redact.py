"""Secret redaction: the one place that decides what must never leave the process.

Everything published (events, results, terminal, LSP notifications) passes
through :class:`Redactor`. It removes, replacing each with ``[REDACTED]``:

1. **Known values** — the run's provider keys and the values of
   secret-looking environment variables — and their encoded forms:
   base64 (standard and URL-safe, padded or not, at any of the three byte
   alignments inside a longer blob), hex (lower and upper case; also hex
   dumps with blanks, offsets and ASCII columns: xxd, hexdump -C, od -tx1),
   percent-encoding (whole or partial), reversed (``rev``), ROT13, upper or
   lower case, base32, base85/ascii85, uuencode, UTF-16/32, byte tokens (C
   arrays, escapes, HTML entities, decimal and octal bytes; see
   :mod:`k1412_ls.text.secret_encodings`), pieces of 8+ characters of
   key-like values, and any of these
   split across lines (``fold -w N``, ``base64``'s 76-column wrap, ``xxd -p``)
   with ``\\n`` or ``\\r\\n``, trailing blanks, and indentation or ``> `` quote
   prefixes on the continuation lines.
2. **Credential shapes** anywhere (:data:`SECRET_PATTERNS`): provider and cloud
   key formats, JWTs, bearer tokens, private key blocks, the password of
   ``scheme://user:password@host`` URLs, and the values of assignments whose
   name ends in a secret word (``password``, ``passwd``, ``pwd``, ``pass``,
   ``passphrase``, ``secret``, ``token``, ``credential(s)``, or ``api``/
   ``access``/``secret``/``private``/``client``/``auth``/… ``key``), in
   env, shell, INI, TOML, YAML, JSON and URL-query shapes.

Assignment rule (see docs/redaction.md): a *literal* value is redacted; code
is not. Quoted strings are literals; an unquoted value is kept when it is a
placeholder (``$VAR``, ``${VAR}``, ``{{ x }}``, ``<x>``, ``%(x)s``, ``***``),
an expression (contains a bracket or parenthesis, or is a dotted name such as
``os.environ`` or ``self.password``), a type, keyword or null/boolean
(``str``, ``None``, ``null``, ``true`` …), a type-like name after ``:``
(``password: SecretStr``), or a code name after an ``=`` written as code
writes it (``password = pw``, ``f(token=tok, …)``). Everything else (``password=hunter2``,
``PASSWORD=letmein``, ``client_secret: abc123``) is redacted; the name and
separator stay so the output remains readable.
"""

from __future__ import annotations

import base64
import bisect
import codecs
import os
import re
from collections.abc import Iterable, Mapping
from typing import Any
from urllib.parse import unquote_to_bytes

from k1412_ls.text.secret_assignments import REDACTED, redact_assignments, url_passwords
from k1412_ls.text.secret_encodings import (
    DUMP_LINE,
    byte_run_spans,
    cut_lines,
    dump_bytes,
    dump_groups,
    extra_forms,
)

# Each pattern matches a whole credential; order matters only for overlap. Patterns start with
# their literal prefix (the word-boundary check comes after it as a look-behind) so the regex
# engine can skip ahead to candidates instead of trying every position.
SECRET_PATTERNS: tuple[re.Pattern[str], ...] = (
    re.compile(r"-----BEGIN [A-Z0-9 ]*PRIVATE KEY-----.*?(?:-----END [A-Z0-9 ]*PRIVATE KEY-----|\Z)", re.S),
    re.compile(r"sk-(?<!\wsk-)(?:proj-|ant-|svcacct-|admin-)?[A-Za-z0-9_\-]{16,}"),
    re.compile(r"A(?:KIA|SIA)(?<!\wA[KS]IA)[0-9A-Z]{16}\b"),
    re.compile(r"gh[pousr]_(?<!\wgh[pousr]_)[A-Za-z0-9]{30,}\b"),
    re.compile(r"github_pat_(?<!\wgithub_pat_)[A-Za-z0-9_]{40,}\b"),
    re.compile(r"xox[abposr]-(?<!\wxox[abposr]-)[A-Za-z0-9\-]{10,}\b"),
    re.compile(r"AIza(?<!\wAIza)[0-9A-Za-z_\-]{35}\b"),
    re.compile(r"eyJ(?<!\weyJ)[A-Za-z0-9_\-]{8,}\.eyJ[A-Za-z0-9_\-]{8,}\.[A-Za-z0-9_\-]{8,}"),
    re.compile(r"(?i)bearer(?<!\wbearer)\s+[A-Za-z0-9_\-\.=+/]{8,}"),
    # "Authorization: Basic dXNlcjpwYXNz" too: the scheme word is not the credential.
    re.compile(r"(?i)(?<![A-Za-z0-9])(authorization|x-api-key)(\s*[:=]\s*)['\"]?"
               r"(?:(?:basic|bearer|digest|token)\s+)?[^\s'\"]{8,}"),
)
# Lower-case words one of which a case-insensitive pattern needs; without them it is not run.
_PATTERN_HINTS: tuple[tuple[str, ...], ...] = ((),) * 8 + (("bearer",), ("authorization", "x-api-key"))

_SECRET_NAME = re.compile(r"(?i)(key|token|secret|passw(or)?d|credential|auth|private|session|cookie)")
_MIN_VALUE_LEN = 6
# No credential shape is shorter than "pwd=x"; shorter strings (most event fields) pass untouched.
_SHORTEST_CREDENTIAL = 5


# Whole parts of a name (split at "_", "-", ".") that mark a credential the words above miss:
# MYSQL_PWD, SSHPASS, BORG_PASSPHRASE, GITHUB_PAT, SLACK_WEBHOOK_URL, SENTRY_DSN.
_SECRET_PARTS = frozenset({"pwd", "pass", "passphrase", "sshpass", "passcode", "pat", "webhook", "dsn"})
_NAME_SPLIT = re.compile(r"[_\-.]+")
_NOT_SECRET_NAMES = frozenset({"PWD", "OLDPWD"})  # the shell's working directories


def is_secret_env_name(name: str) -> bool:
    """True for environment variable names that usually hold credentials."""
    if _SECRET_NAME.search(name):
        return True
    if name in _NOT_SECRET_NAMES:
        return False
    return any(part in _SECRET_PARTS for part in _NAME_SPLIT.split(name.lower()))


def secret_env_values(environ: Mapping[str, str] | None = None, extra_names: Iterable[str] = ()) -> set[str]:
    """Values of secret-looking variables (and of ``extra_names``) worth redacting."""
    env = os.environ if environ is None else environ
    names = {name for name in env if is_secret_env_name(name)} | set(extra_names)
    return {env[name] for name in names if len(env.get(name, "")) >= _MIN_VALUE_LEN}


# --- known values and their encoded forms ---------------------------------------------------------

# What a line fold leaves between two pieces of one value: blanks (and a CR) at the end of a
# line, the line break, and the next line's indentation or "> " quote prefix. Text is searched
# with these removed.
_TRAILING = " \t\r"
_LEADING = " \t>"
_FOLD_EDGE = " \t\r\n>"
# A percent-encoded run: %XX triples and any other non-blank characters (partial encoding leaves
# reserved characters such as "/" and "@" as they are).
_PCT = re.compile(r"%[0-9A-Fa-f]{2}")
_PCT_RUN = re.compile(r"\S{1,16384}")
_BLANK = re.compile(r"\s")
_PCT_LOOKBACK = 4096
# Output characters of base64 that depend only on the value, for a value starting at byte
# offset 0, 1 or 2 of a 3-byte group (the first ceil(8k/6) characters mix in the bytes before).
_B64_FIRST_CLEAN = (0, 2, 3)


def _unfold(text: str) -> str:
    """``text`` with every line fold removed (see :func:`_pieces` for the exact rule)."""
    if "\n" not in text:
        return text
    lines = text.split("\n")
    last = len(lines) - 1
    return "".join([lines[0].rstrip(_TRAILING)]
                    + [line.lstrip(_LEADING).rstrip(_TRAILING) for line in lines[1:last]]
                    + [lines[last].lstrip(_LEADING)])


def _pieces(text: str) -> list[tuple[int, int]]:
    """The ``(start, end)`` spans of ``text`` that :func:`_unfold` keeps, in order."""
    if "\n" not in text:
        return [(0, len(text))]
    lines = text.split("\n")
    last = len(lines) - 1
    spans: list[tuple[int, int]] = []
    at = 0
    for index, line in enumerate(lines):
        start = at + (len(line) - len(line.lstrip(_LEADING)) if index else 0)
        end = at + (len(line.rstrip(_TRAILING)) if index < last else len(line))
        spans.append((start, max(start, end)))
        at += len(line) + 1
    return spans


def encoded_forms(secret: str) -> set[str]:
    """The strings that give ``secret`` away: itself and its encodings, as searched in unfolded text.

    Every form is at least :data:`_MIN_VALUE_LEN` characters long; shorter ones
    would match ordinary text.
    """
    raw = _unfold(secret).strip(_FOLD_EDGE)
    data = secret.encode("utf-8", "surrogatepass")
    forms = {raw, raw[::-1], raw.upper(), raw.lower(), codecs.encode(raw, "rot13"), data.hex(), data.hex().upper()}
    for offset, first in enumerate(_B64_FIRST_CLEAN):
        encoded = base64.b64encode(b"\0" * offset + data + b"\0\0").decode("ascii")
        core = encoded[first:(8 * (offset + len(data))) // 6]
        forms.add(core)
        forms.add(core.replace("+", "-").replace("/", "_"))
    forms |= extra_forms(raw, data)
    return {form for form in forms if len(form) >= _MIN_VALUE_LEN}


# Pieces of a key-like known value (20+ characters of letters and digits, no blanks) are removed
# too once FRAGMENT characters long: `fold -w 8 | nl`, `cut -c3-`, a key printed in labelled parts.
# They are found by ANCHOR-character pieces taken every FRAGMENT - ANCHOR + 1 characters, so every
# FRAGMENT-long piece holds one whole anchor. Pieces made only of lower-case letters and punctuation
# ("sk-proj-", "-canary-") are words or prefixes shared by many keys and stay.
FRAGMENT = 8
_ANCHOR = 5
_SHORT_TEXT = 1024  # up to this length, the gram check decides whether forms are searched at all
# In longer texts, forms of SAMPLED + ANCHOR - 1 characters or more are searched only when a piece of
# them is at one of every SAMPLED positions (such a form, wherever it is, covers one whole sampled piece).
_SAMPLED = 16
_KEY_LIKE = re.compile(r"(?![/~.])(?=[^0-9]*[0-9])(?=[^A-Za-z]*[A-Za-z])[A-Za-z0-9_\-+/=.~]{20,}")  # not a path
_WORD_LIKE = re.compile(r"[a-z_\-.]+")


def _anchors(value: str) -> tuple[tuple[int, str], ...]:
    step = FRAGMENT - _ANCHOR + 1
    return tuple((at, value[at:at + _ANCHOR]) for at in range(0, len(value) - _ANCHOR + 1, step))


def _fragments(joined: str, values: tuple[tuple[str, tuple[tuple[int, str], ...]], ...],
               found: list[tuple[int, int]]) -> list[tuple[int, int]]:
    """Spans of ``joined`` that repeat FRAGMENT or more characters of a key-like value, outside ``found``."""
    done = _merge(found)
    starts = [start for start, _ in done]
    spans: list[tuple[int, int]] = []
    for value, anchors in values:
        hits: list[tuple[int, int]] = []
        for offset, anchor in anchors:
            at = joined.find(anchor)
            while at >= 0:
                hits.append((at, offset))
                at = joined.find(anchor, at + 1)
        reach = -1
        for at, offset in sorted(hits):
            index = bisect.bisect_right(starts, at) - 1
            if at < reach or (index >= 0 and at < done[index][1]):
                continue  # inside a piece already found
            lo, hi, first, last = at, at + _ANCHOR, offset, offset + _ANCHOR
            while lo > 0 and first > 0 and joined[lo - 1] == value[first - 1]:
                lo, first = lo - 1, first - 1
            while hi < len(joined) and last < len(value) and joined[hi] == value[last]:
                hi, last = hi + 1, last + 1
            if hi - lo >= FRAGMENT and not _WORD_LIKE.fullmatch(joined[lo:hi]):
                spans.append((lo, hi))
                reach = hi
    return spans


def _decoded_spans(text: str, start: int, end: int, decoded: bytes, values: list[bytes]) -> list[tuple[int, int]]:
    """Where in ``text[start:end]`` (percent-encoded) the decoded ``values`` came from."""
    origin: list[int] = []  # text offset of each decoded byte
    at = start
    while at < end:
        if text[at] == "%" and _PCT.match(text, at):
            origin.append(at)
            at += 3
        else:
            origin.extend([at] * len(text[at].encode("utf-8", "surrogatepass")))
            at += 1
    origin.append(end)
    spans: list[tuple[int, int]] = []
    for value in values:
        found = decoded.find(value)
        while found >= 0:
            spans.append((origin[found], origin[found + len(value)]))
            found = decoded.find(value, found + len(value))
    return spans


def _merge(spans: list[tuple[int, int]]) -> list[tuple[int, int]]:
    merged: list[tuple[int, int]] = []
    for start, end in sorted(spans):
        if merged and start <= merged[-1][1]:
            if end > merged[-1][1]:
                merged[-1] = (merged[-1][0], end)
        else:
            merged.append((start, end))
    return merged


def _replace_folded(text: str, spans: list[tuple[int, int]]) -> str:
    """Replace ``spans`` of the unfolded text in ``text``: one marker per line piece, line breaks kept."""
    cuts: list[tuple[int, int]] = []
    pieces = _pieces(text)
    index = 0
    joined_at = [0]
    for start, end in pieces:
        joined_at.append(joined_at[-1] + end - start)
    for start, end in spans:
        while index < len(pieces) and joined_at[index + 1] <= start:
            index += 1
        scan = index
        while scan < len(pieces) and joined_at[scan] < end:
            piece_start, piece_end = pieces[scan]
            lo = piece_start + max(start - joined_at[scan], 0)
            hi = piece_start + min(end - joined_at[scan], piece_end - piece_start)
            if hi > lo:
                cuts.append((lo, hi))
            scan += 1
    out: list[str] = []
    at = 0
    for lo, hi in _merge(cuts):
        out.append(text[at:lo])
        out.append(REDACTED)
        at = hi
    out.append(text[at:])
    return "".join(out)


# ANSI/VT escape sequences (CSI, OSC, two-character) and zero-width or invisible format characters.
_INVISIBLE = re.compile(
    r"\x1b\[[0-?]*[ -/]*[@-~]|\x1b\][^\x07\x1b]*(?:\x07|\x1b\\)|\x1b[@-Z\\-_]"
    r"|[\u200b-\u200f\u2060-\u2064\ufeff\u00ad\u034f\u180e]"
)


class Redactor:
    """Replaces credentials in strings and nested JSON-like values."""

    def __init__(self, literal_secrets: Iterable[str] = ()) -> None:
        self._literals: list[str] = []
        self._raw_bytes: tuple[bytes, ...] = ()
        self._forms: tuple[str, ...] = ()
        self._nul_forms: tuple[str, ...] = ()  # UTF-16/32 forms, searched only in text with a NUL
        self._short_forms: tuple[str, ...] = ()
        self._long_forms: tuple[str, ...] = ()
        self._owners: dict[str, list[str]] | None = None  # ANCHOR-long piece -> long forms holding it, on demand
        self._raw_texts: tuple[str, ...] = ()
        self._shortest_form = 0
        self._key_like: tuple[tuple[str, tuple[tuple[int, str], ...]], ...] = ()
        self._grams: frozenset[str] = frozenset()
        self._set({s for s in literal_secrets if len(s) >= _MIN_VALUE_LEN})

    def _set(self, literals: set[str]) -> None:
        # Longest first so a secret that contains another is removed whole.
        self._literals = sorted(literals, key=len, reverse=True)
        raw = {_unfold(s).strip(_FOLD_EDGE) for s in literals} - {""}
        self._raw_bytes = tuple(sorted({r.encode("utf-8", "surrogatepass") for r in raw}, key=len, reverse=True))
        forms: set[str] = set()
        for literal in literals:
            forms |= encoded_forms(literal)
        self._forms = tuple(sorted((f for f in forms if "\0" not in f), key=len, reverse=True))
        self._nul_forms = tuple(sorted((f for f in forms if "\0" in f), key=len, reverse=True))
        self._raw_texts = tuple(r.decode("latin-1") for r in self._raw_bytes)
        self._shortest_form = min((len(form) for form in forms), default=0)
        self._key_like = tuple((r, _anchors(r)) for r in sorted(raw) if _KEY_LIKE.fullmatch(r))
        # Every ANCHOR-long piece of every form: a short text sharing none of them holds no form and
        # no fragment, which a set lookup per position finds out faster than a search per form.
        self._grams = frozenset(form[i:i + _ANCHOR] for form in forms for i in range(len(form) - _ANCHOR + 1))
        self._short_forms = tuple(f for f in self._forms if len(f) < _SAMPLED + _ANCHOR - 1)
        self._long_forms = self._forms[:len(self._forms) - len(self._short_forms)]
        self._owners = None

    @classmethod
    def from_environment(cls, extra_names: Iterable[str] = (), extra_values: Iterable[str] = ()) -> Redactor:
        return cls(secret_env_values(extra_names=extra_names) | set(extra_values))

    def add(self, *values: str) -> None:
        self._set(set(self._literals) | {v for v in values if len(v) >= _MIN_VALUE_LEN})

    def text(self, value: str) -> str:
        if len(value) < _SHORTEST_CREDENTIAL:
            return value
        if self._forms and _INVISIBLE.search(value):
            # Terminal escapes or zero-width characters can sit between a key's characters: judge the
            # visible text, and when it gives a known value away, publish the visible text, redacted.
            visible = _INVISIBLE.sub("", value)
            if self._known_values(visible) != visible:
                value = visible
        if self._forms and len(value) >= self._shortest_form:
            value = self._known_values(value)
        low = value.lower()
        for pattern, hints in zip(SECRET_PATTERNS, _PATTERN_HINTS, strict=True):
            if not hints or any(hint in low for hint in hints):
                value = pattern.sub(_replacement, value)
        return redact_assignments(url_passwords(value))

    def _known_values(self, value: str) -> str:
        """Remove known values and their encoded forms, also when folded across lines."""
        joined = _unfold(value)
        spans: list[tuple[int, int]] = []
        grams = self._grams
        if len(joined) <= _SHORT_TEXT and not any(joined[i:i + _ANCHOR] in grams
                                                  for i in range(len(joined) - _ANCHOR + 1)):
            forms: tuple[str, ...] = ()
            key_like: tuple[tuple[str, tuple[tuple[int, str], ...]], ...] = ()
        else:
            forms, key_like = self._forms, self._key_like
            if len(joined) > _SHORT_TEXT:
                hits = {joined[i:i + _ANCHOR] for i in range(0, len(joined) - _ANCHOR + 1, _SAMPLED)} & grams
                forms = self._short_forms + tuple({f for gram in hits for f in self._owners_of(gram)})
        if forms and "\0" in joined:
            forms += self._nul_forms
        for form in forms:
            at = joined.find(form)
            while at >= 0:
                spans.append((at, at + len(form)))
                at = joined.find(form, at + len(form))
        if "%" in joined:
            spans.extend(self._percent_encoded(joined))
        if key_like:
            spans.extend(_fragments(joined, key_like, spans))
        value = _replace_folded(value, _merge(spans)) if spans else value
        value = self._hex_dumps(value)
        runs = byte_run_spans(value, self._decoded_hits)
        return cut_lines(value, _merge(runs)) if runs else value

    def _owners_of(self, gram: str) -> list[str]:
        if self._owners is None:
            self._owners = {}
            for form in self._long_forms:
                for i in range(len(form) - _ANCHOR + 1):
                    self._owners.setdefault(form[i:i + _ANCHOR], []).append(form)
        return self._owners.get(gram, [])

    def _decoded_hits(self, decoded: str) -> list[tuple[int, int]]:
        """Spans of decoded bytes (as latin-1 text) that are a known value or a piece of a key-like one."""
        spans: list[tuple[int, int]] = []
        for raw in self._raw_texts:
            at = decoded.find(raw)
            while at >= 0:
                spans.append((at, at + len(raw)))
                at = decoded.find(raw, at + len(raw))
        return spans + _fragments(decoded, self._key_like, spans) if self._key_like else spans

    def _hex_dumps(self, value: str) -> str:
        """Blocks of hex-dump lines whose bytes hold a known value: every line's groups and ASCII column go."""
        blocks: list[list[re.Match[str]]] = []
        for line in DUMP_LINE.finditer("\n" + value):  # offsets are one more than in value
            if blocks and blocks[-1][-1].end() == line.start():
                blocks[-1].append(line)
            else:
                blocks.append([line])
        cuts: list[tuple[int, int]] = []
        for block in blocks:
            decoded = [dump_bytes(dump_groups(line.group("hex"))) for line in block]
            written = b"".join(one for one, _ in decoded)
            swapped = b"".join(other for _, other in decoded)
            # Without its last byte too: a dump of an odd-length value may end in a half word.
            if any(raw[:-1] in written or raw[:-1] in swapped for raw in self._raw_bytes):
                cuts.extend((line.end("offset") - 1, line.end() - 1) for line in block)
        if not cuts:
            return value
        out: list[str] = []
        at = 0
        for lo, hi in cuts:
            out.append(value[at:lo])
            out.append(" " + REDACTED)
            at = hi
        out.append(value[at:])
        return "".join(out)

    def _percent_encoded(self, joined: str) -> list[tuple[int, int]]:
        """Spans of percent-encoding (whole or partial) that decode to a known value, exactly."""
        spans: list[tuple[int, int]] = []
        covered = 0
        for triple in _PCT.finditer(joined):
            if triple.start() < covered:
                continue
            floor = max(covered, triple.start() - _PCT_LOOKBACK)
            before = joined[floor:triple.start()][::-1]
            stop = _BLANK.search(before)
            start = triple.start() - (stop.start() if stop else len(before))
            run = _PCT_RUN.match(joined, triple.start())
            end = run.end() if run else triple.end()
            covered = end
            decoded = unquote_to_bytes(joined[start:end].encode("utf-8", "surrogatepass"))
            hits = [raw for raw in self._raw_bytes if raw in decoded]
            if hits:
                spans.extend(_decoded_spans(joined, start, end, decoded, hits))
        return spans

    def value(self, value: Any) -> Any:
        """Redact every string inside a JSON-like value (dicts, lists, tuples)."""
        if isinstance(value, str):
            return self.text(value)
        if isinstance(value, Mapping):
            return {str(k): self.value(v) for k, v in value.items()}
        if isinstance(value, list | tuple):
            return [self.value(v) for v in value]
        return value


def _replacement(match: re.Match[str]) -> str:
    # Keep the label of "api_key: xxx" style matches so the output stays readable.
    if match.re.groups >= 2 and match.group(1) and match.group(2):
        return f"{match.group(1)}{match.group(2)}{REDACTED}"
    return REDACTED
