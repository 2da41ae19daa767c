"""Secret redaction: the one place that decides what must never leave the process.

Everything published (events, results, terminal, LSP notifications) passes
through :class:`Redactor`. It removes common credential shapes wherever they
appear and the exact values of secret-looking environment variables.
"""

from __future__ import annotations

import os
import re
from collections.abc import Iterable, Mapping
from typing import Any

REDACTED = "[REDACTED]"

# Each pattern matches a whole credential; order matters only for overlap.
SECRET_PATTERNS: tuple[re.Pattern[str], ...] = (
    re.compile(r"-----BEGIN [A-Z0-9 ]*PRIVATE KEY-----.*?(?:-----END [A-Z0-9 ]*PRIVATE KEY-----|\Z)", re.S),
    re.compile(r"\bsk-(?:proj-|ant-|svcacct-|admin-)?[A-Za-z0-9_\-]{16,}"),
    re.compile(r"\b(?:AKIA|ASIA)[0-9A-Z]{16}\b"),
    re.compile(r"\bgh[pousr]_[A-Za-z0-9]{30,}\b"),
    re.compile(r"\bgithub_pat_[A-Za-z0-9_]{40,}\b"),
    re.compile(r"\bxox[abposr]-[A-Za-z0-9\-]{10,}\b"),
    re.compile(r"\bAIza[0-9A-Za-z_\-]{35}\b"),
    re.compile(r"\beyJ[A-Za-z0-9_\-]{8,}\.eyJ[A-Za-z0-9_\-]{8,}\.[A-Za-z0-9_\-]{8,}"),
    re.compile(r"(?i)\bbearer\s+[A-Za-z0-9_\-\.=+/]{8,}"),
    re.compile(r"(?i)(?<![A-Za-z0-9])(authorization|api[_-]?key|x-api-key)(\s*[:=]\s*)['\"]?[^\s'\"]{8,}"),
)

_SECRET_NAME = re.compile(r"(?i)(key|token|secret|passw(or)?d|credential|auth|private|session|cookie)")
_MIN_VALUE_LEN = 6


def is_secret_env_name(name: str) -> bool:
    """True for environment variable names that usually hold credentials."""
    return bool(_SECRET_NAME.search(name))


def secret_env_values(environ: Mapping[str, str] | None = None, extra_names: Iterable[str] = ()) -> set[str]:
    """Values of secret-looking variables (and of ``extra_names``) worth redacting."""
    env = os.environ if environ is None else environ
    names = {name for name in env if is_secret_env_name(name)} | set(extra_names)
    return {env[name] for name in names if len(env.get(name, "")) >= _MIN_VALUE_LEN}


class Redactor:
    """Replaces credentials in strings and nested JSON-like values."""

    def __init__(self, literal_secrets: Iterable[str] = ()) -> None:
        # Longest first so a secret that contains another is removed whole.
        self._literals = sorted({s for s in literal_secrets if len(s) >= _MIN_VALUE_LEN}, key=len, reverse=True)

    @classmethod
    def from_environment(cls, extra_names: Iterable[str] = (), extra_values: Iterable[str] = ()) -> Redactor:
        return cls(secret_env_values(extra_names=extra_names) | set(extra_values))

    def add(self, *values: str) -> None:
        merged = set(self._literals) | {v for v in values if len(v) >= _MIN_VALUE_LEN}
        self._literals = sorted(merged, key=len, reverse=True)

    def text(self, value: str) -> str:
        for literal in self._literals:
            if literal in value:
                value = value.replace(literal, REDACTED)
        for pattern in SECRET_PATTERNS:
            value = pattern.sub(_replacement, value)
        return value

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
