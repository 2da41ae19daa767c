"""Redaction: credentials never leave the process, wherever they appear."""

from __future__ import annotations

import pytest

from k1412_ls.text.redact import REDACTED, Redactor, secret_env_values

SECRETS = [
    "sk-proj-AbC_dEf-GhIjKlMnOpQrStUvWxYz0123456789",
    "sk-abcdefghijklmnopqrstuvwx",
    "AKIAIOSFODNN7EXAMPLE",
    "ghp_0123456789abcdefghijABCDEFGHIJ012345",
    "Bearer abcdef.ghijkl-mnop_qr",
    "eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxMjM0NTY3ODkwIn0.SflKxwRJSMeKKF2QT4fwpMeJf36POk6yJV_adQssw5c",
    "-----BEGIN RSA PRIVATE KEY-----\nMIIEowIBAAKCAQEA\n-----END RSA PRIVATE KEY-----",
    "-----BEGIN OPENSSH PRIVATE KEY-----\nb3BlbnNzaC1rZXktdjEAAAAA\n-----END OPENSSH PRIVATE KEY-----",
]


@pytest.mark.parametrize("secret", SECRETS)
def test_patterns_are_redacted_in_text(secret: str) -> None:
    out = Redactor().text(f"output before {secret} after")
    assert secret not in out and REDACTED in out
    assert out.startswith("output before") and out.endswith("after")


def test_nested_values_and_env_values() -> None:
    env = {"MY_SERVICE_TOKEN": "plain-looking-value-123", "HOME": "/root", "PATH": "/usr/bin"}
    values = secret_env_values(env)
    assert values == {"plain-looking-value-123"}
    redactor = Redactor(values)
    doc = {"a": ["x plain-looking-value-123 y", {"b": "api_key=abcdefgh12345"}], "n": 3}
    out = redactor.value(doc)
    assert out["a"][0] == f"x {REDACTED} y"
    assert "abcdefgh12345" not in out["a"][1]["b"] and out["a"][1]["b"].startswith("api_key=")
    assert out["n"] == 3


def test_ordinary_text_is_untouched() -> None:
    text = "def risky_key(tokenizer): return sk_learn  # skeleton, 12345"
    assert Redactor().text(text) == text
