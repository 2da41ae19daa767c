"""Secrets written as assignments and URL passwords: ``password = "…"``, ``"client_secret": "…"``, ``u:p@host``.

Only literal values are redacted: a placeholder (``$VAR``, ``<x>``), an
expression (``os.environ["X"]``, ``input()``) or a plain code name keeps the
text readable. Used by :class:`k1412_ls.text.redact.Redactor`.
"""

from __future__ import annotations

import re

REDACTED = "[REDACTED]"


# scheme://user:password@ — anchored on "://" so long runs of letters cost nothing; bounded so a
# hostile "://a:a:a:…" line cannot make it quadratic.
_URL_PASSWORD = re.compile(r"://(?<=[A-Za-z0-9]://)(?P<user>[^\s/:@]{0,256}):(?P<secret>[^\s/@]{1,256})@")

# Run on lower-cased text (same length, so the offsets hold for the original); "key" counts only
# after a qualifier (api_key, secretKey, x-api-key), checked in _assignment.
_ASSIGNMENT_SOURCE = (
    r"(?:pass(?:word|wd|phrase)?|pwd|secret|token|credentials?|key)(?P<rest>[a-z0-9_.\-]{0,48}?)"
    r"(?P<sep>(?:\\?[\"'])?[ \t]*(?::=|=>|[:=])[ \t]*)(?!=)"
    r"(?P<value>\\\"[^\"\n]{0,1024}?\\\"|\"(?:[^\"\\\n]|\\.){0,1024}\"|'[^'\n]{0,1024}'|[^\s'\"`,;&<>]{1,1024})"
)
_ASSIGNMENT = re.compile(_ASSIGNMENT_SOURCE)
_ASSIGNMENT_ANY_CASE = re.compile(_ASSIGNMENT_SOURCE, re.I)  # for text whose lower-casing changes its length
_NAME_TAIL = re.compile(r"[A-Za-z0-9_.\-]{0,64}$")
_KEY_QUALIFIER = re.compile(
    r"(?i)(?:api|access|secret|private|client|auth|signing|encryption|master|account|app)[_.\-]?$"
)
_PLACEHOLDER = re.compile(
    r"\$\{?[A-Za-z_][A-Za-z0-9_]*\}?|\{\{?[^{}]*\}?\}|<[^<>]*>|%\([A-Za-z_]\w*\)[sdr]|\*+|x{3,}|X{3,}"
    r"|\.{3}|…|\[REDACTED\]|[|>\-+]+"
)
_EXPRESSION = re.compile(r"[()\[\]{}]|^[A-Za-z_]\w*(?:\.[A-Za-z_]\w*)+$")
# Names as code spells them (snake_case, camelCase, PascalCase, CONSTANT_CASE) and type names. A name
# with more than two digits or over 32 characters is taken for a random value (wJalrXUtnFEMI…K7MD).
_CODE_NAME = re.compile(
    r"[a-z_][a-z0-9_]*|[a-z]+(?:[A-Z][a-z0-9]+)+|(?:[A-Z][a-z0-9]+)+|[A-Z][A-Z0-9]*(?:_[A-Z0-9]+)+"
)
_MAX_CODE_NAME = 32
# Name parts after the secret word that make the name about a secret, not the secret itself.
_NOT_SECRET_PARTS = frozenset({
    "name", "names", "id", "ids", "arn", "ref", "refs", "path", "paths", "file", "files", "dir", "url", "uri",
    "endpoint", "type", "kind", "len", "length", "size", "count", "version", "env", "var", "provider", "manager",
    "store", "backend", "enabled", "disabled", "required", "mount", "namespace", "rotation", "ttl", "expiry",
    "expires", "expiration", "at", "limit", "max", "min", "field", "header", "prefix", "suffix", "format", "policy",
    "label", "description", "help", "prompt", "param", "source", "mode", "helper", "command", "cmd",
})
_NAME_PART = re.compile(r"[A-Z]?[a-z0-9]+|[A-Z0-9]+(?![a-z])")
_TYPE_NAME = re.compile(r"(?:[A-Z][a-z0-9]+)+|[A-Z]{1,4}")
_NON_SECRETS = frozenset({
    "none", "null", "nil", "undefined", "true", "false", "yes", "no", "on", "off", "str", "string", "bytes",
    "int", "bool", "any", "required", "optional", "empty", "unset", "redacted",
})


def _ends_name(prefix: str, word: str) -> bool:
    """``word`` starts the last part of a name: ``db_password``, ``X-Auth-Token``, ``clientSecret``, not ``bypass``."""
    if not prefix:
        return True
    last = prefix[-1]
    if last in "_.-":
        return True
    return word[0].isupper() and (last.islower() or last.isdigit())


def _secret_name(text: str, start: int, word: str) -> bool:
    tail = _NAME_TAIL.search(text, max(0, start - 64), start)
    prefix = tail.group(0) if tail else ""
    if word.lower() != "key":
        return _ends_name(prefix, word)
    qualifier = _KEY_QUALIFIER.search(prefix)
    return bool(qualifier) and _ends_name(prefix[:qualifier.start()], prefix[qualifier.start():] or word)


def _secret_rest(rest: str) -> bool:
    """The name parts after the secret word keep it a secret: ``_ACCESS_KEY``, ``_VALUE``, not ``_name``, ``izer``."""
    if not rest:
        return True
    if rest[0] not in "_.-" and not rest[0].isupper():
        return False  # tokenizer, passage, secrets
    parts = _NAME_PART.findall(rest)
    return not parts or parts[-1].lower() not in _NOT_SECRET_PARTS


def _literal_value(value: str, sep: str, after: str) -> bool:
    """True when an unquoted assigned value is a literal (to redact), not code or a placeholder."""
    if _PLACEHOLDER.fullmatch(value) or _EXPRESSION.search(value) or value.lower() in _NON_SECRETS:
        return False
    if ":" in sep and ":=" not in sep:
        return not _TYPE_NAME.fullmatch(value)  # password: SecretStr is an annotation
    code_like = sep.startswith((" ", "\t")) or sep.endswith((" ", "\t")) or after in (",", ")")
    code_name = (len(value) <= _MAX_CODE_NAME and sum(c.isdigit() for c in value) <= 2
                 and _CODE_NAME.fullmatch(value) is not None)
    return not (code_like and code_name)  # password = pw, connect(password=pw, …)


def _assignment(text: str, match: re.Match[str]) -> str | None:
    """The redacted form of one assignment match (offsets into ``text``), or None to keep it."""
    start, sep_start, value_start, end = match.start(), match.start("sep"), match.start("value"), match.end()
    rest_start = match.start("rest")
    if not _secret_name(text, start, text[start:rest_start]) or not _secret_rest(text[rest_start:sep_start]):
        return None
    value = text[value_start:end]
    if text[start:rest_start].lower() == "pwd" and value.lstrip("\"'").startswith(("/", "~")):
        return None  # PWD=/work/dir (env output) is the working directory
    head = text[start:value_start]
    if value.startswith('\\"'):
        inner, quote = value[2:-2], '\\"'
    elif value[0] in "\"'":
        inner, quote = value[1:-1], value[0]
    else:
        after = text[end:end + 1]
        return head + REDACTED if _literal_value(value, text[sep_start:value_start], after) else None
    if not inner.strip() or _PLACEHOLDER.fullmatch(inner.strip()):
        return None
    return f"{head}{quote}{REDACTED}{quote}"


def redact_assignments(text: str) -> str:
    low = text.lower()
    matches = _ASSIGNMENT.finditer(low) if len(low) == len(text) else _ASSIGNMENT_ANY_CASE.finditer(text)
    out: list[str] = []
    at = 0
    for match in matches:
        replaced = _assignment(text, match)
        if replaced is not None:
            out.append(text[at:match.start()])
            out.append(replaced)
            at = match.end()
    if not out:
        return text
    out.append(text[at:])
    return "".join(out)


def _url_password(match: re.Match[str]) -> str:
    if _PLACEHOLDER.fullmatch(match.group("secret")):
        return match.group(0)
    return f"://{match.group('user')}:{REDACTED}@"


def url_passwords(text: str) -> str:
    """``scheme://user:password@`` with the password redacted (placeholders kept)."""
    return _URL_PASSWORD.sub(_url_password, text) if "://" in text else text


__all__ = ["REDACTED", "redact_assignments", "url_passwords"]
