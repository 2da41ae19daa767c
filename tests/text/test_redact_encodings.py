"""Redaction against an adversary who encodes, folds or reverses a known secret.

Every case is table-driven and has two halves:

* a positive control: the unredacted text really gives the secret away (the
  independent decoders below recover it), so the case cannot pass vacuously;
* the assertion that after redaction *no* decoder recovers any
  ``FRAGMENT``-character piece of the secret.

The decoders here are written independently of ``k1412_ls.text.redact``: they
unfold lines, reverse, base64-decode every run at every offset (both
alphabets), hex-decode every run at both nibble offsets and percent-decode.
Negative cases (other base64, hashes, UUIDs, SHAs, code) must come out
byte-for-byte unchanged.
"""

from __future__ import annotations

import base64
import binascii
import codecs
import contextlib
import html
import re
import string
import textwrap
from collections.abc import Callable
from urllib.parse import quote, unquote

import pytest

from k1412_ls.text.redact import FRAGMENT as CORE_FRAGMENT
from k1412_ls.text.redact import REDACTED, Redactor

PROVIDER_KEY = "sk-proj-" + "Qm7RxT2vWk9LpZ4sNc8HjY3bFd6GtA1eUo5iKy0w"
LONG_KEY = "sk-proj-" + "".join("Ab3De6Gh9Jk2Mn5Pq8St1Vw4Yz7" for _ in range(6))[:156]  # real keys: ~164 chars
PLAIN_VALUE = "plain-deepseek-canary-4815162342"  # matches no credential pattern
SPECIAL_VALUE = "p@ss/w+rd=9%Z~q!x?"  # characters that base64, hex and percent-encoding all treat specially
SHORT_VALUE = "hunter2x"  # a short secret environment value

SECRETS = {"provider key": PROVIDER_KEY, "long key": LONG_KEY, "plain value": PLAIN_VALUE,
           "special value": SPECIAL_VALUE, "short value": SHORT_VALUE}
FRAGMENT = 6  # no piece this long of a secret may survive, in any decoding


def redactor() -> Redactor:
    return Redactor(SECRETS.values())


# --- independent decoders ---------------------------------------------------------------------------

_FOLD = re.compile(r"[ \t]*\r?\n[ \t>]*")
_B64_RUN = re.compile(r"[A-Za-z0-9+/_\-]{8,}={0,2}")
_HEX_RUN = re.compile(r"[0-9a-fA-F]{12,}")


def _b64_views(text: str) -> list[str]:
    views: list[str] = []
    for run in _B64_RUN.findall(text):
        std = run.rstrip("=").replace("-", "+").replace("_", "/")
        for offset in range(4):
            chunk = std[offset:]
            if len(chunk) % 4 == 1:
                chunk = chunk[:-1]
            chunk += "=" * (-len(chunk) % 4)
            try:
                views.append(base64.b64decode(chunk).decode("latin-1"))
            except (binascii.Error, ValueError):
                continue
    return views


def _hex_views(text: str) -> list[str]:
    views: list[str] = []
    for run in _HEX_RUN.findall(text):
        for offset in (0, 1):
            chunk = run[offset:]
            views.append(bytes.fromhex(chunk[: len(chunk) - len(chunk) % 2]).decode("latin-1"))
    return views


def _dump_hex(text: str, *, swap: bool) -> str:
    """The hex of a dump with offsets and ASCII columns dropped: per line, the leading same-width groups."""
    out = []
    for line in text.splitlines():
        tokens = line.split()
        if tokens and re.fullmatch(r"[0-9a-f]{7,8}:?", tokens[0]) and len(tokens) > 1:
            tokens = tokens[1:]
        width = len(tokens[0]) if tokens else 0
        for token in tokens:
            if not re.fullmatch(r"(?:[0-9a-fA-F]{2})+", token) or len(token) > width:
                break
            out.append(token[2:] + token[:2] if swap and len(token) == 4 else token)
    return "".join(out)


def decoded_views(text: str) -> list[str]:
    """Every reading of ``text`` an attacker would try."""
    unfolded = _FOLD.sub("", text)
    line_reversed = "\n".join(line[::-1] for line in text.splitlines())
    # Hex dumps: the groups with all blanks gone, and with hexdump's little-endian words swapped back.
    squeezed = re.sub(r"\s+", "", text)
    unswapped = re.sub(r"\s+", "", re.sub(r"\b([0-9a-f]{2})([0-9a-f]{2})\b", r"\2\1", text))
    base = [text, unfolded, text[::-1], unfolded[::-1], line_reversed, unquote(unfolded), squeezed, unswapped,
            _dump_hex(text, swap=False), _dump_hex(text, swap=True), codecs.decode(unfolded, "rot13")]
    views = list(base)
    for view in base:
        views += _b64_views(view) + _hex_views(view)
    return views


def leaked(text: str, secret: str) -> list[str]:
    """The pieces of ``secret`` (``FRAGMENT`` characters or more) that some decoding of ``text`` shows."""
    grams = {secret[i:i + FRAGMENT] for i in range(len(secret) - FRAGMENT + 1)}
    found: set[str] = set()
    for view in decoded_views(text):
        low = view.lower()
        found |= {gram for gram in grams if gram in view or gram.lower() in low}  # tr a-z A-Z too
    return sorted(found)


# --- the forms ---------------------------------------------------------------------------------------


def b64(data: str, *, urlsafe: bool = False, pad: bool = True, wrap: int = 0) -> str:
    encoded = (base64.urlsafe_b64encode if urlsafe else base64.b64encode)(data.encode()).decode()
    if not pad:
        encoded = encoded.rstrip("=")
    return "\n".join(textwrap.wrap(encoded, wrap)) if wrap else encoded


def fold(data: str, width: int, *, newline: str = "\n", prefix: str = "") -> str:
    return newline.join(prefix + data[i:i + width] for i in range(0, len(data), width))


def xxd_p(data: str, *, upper: bool = False) -> str:
    hexed = data.encode().hex()
    return fold(hexed.upper() if upper else hexed, 60)


def hexdump(data: str, *, group: int, offset: str, ascii_column: str = "", swap: bool = False) -> str:
    """xxd / xxd -g1 / hexdump -C / od -An -tx1 / hexdump style lines, 16 bytes each."""
    raw = data.encode()
    lines = []
    for at in range(0, len(raw), 16):
        chunk = raw[at:at + 16]
        words = [chunk[i:i + group] for i in range(0, len(chunk), group)]
        hexed = " ".join((w[::-1] if swap and len(w) == 2 else w).hex() for w in words)
        text = "".join(chr(b) if 32 <= b < 127 else "." for b in chunk)
        column = {"": "", "xxd": f"  {text}", "-C": f"  |{text}|"}[ascii_column]
        lines.append(offset.format(at) + hexed + column)
    return "\n".join(lines)


FORMS: dict[str, Callable[[str], str]] = {
    "raw": lambda s: f"value: {s}\n",
    "raw inside a word": lambda s: f"xx{s}yy",
    # echo $KEY | base64: the value starts a 3-byte group; a newline follows it.
    "base64 aligned 0": lambda s: b64(s + "\n"),
    # base64 <<< "key=$KEY" / "ke=$KEY" / "k=$KEY": the three byte alignments inside a longer blob.
    "base64 aligned 1": lambda s: b64(f"key={s}\n"),
    "base64 aligned 2": lambda s: b64(f"ke={s}\n"),
    "base64 aligned 0 after prefix": lambda s: b64(f"k_={s}\n"),
    "base64 unpadded a0": lambda s: b64(s, pad=False),
    "base64 unpadded a1": lambda s: b64("k" + s, pad=False),
    "base64 unpadded a2": lambda s: b64("ke" + s, pad=False),
    "base64 url-safe a0": lambda s: b64(s + "?>", urlsafe=True),
    "base64 url-safe a1": lambda s: b64(f"?{s}", urlsafe=True),
    "base64 url-safe a2 unpadded": lambda s: b64(f"??{s}", urlsafe=True, pad=False),
    "base64 in a JSON blob": lambda s: b64('{"user": "bob", "token": "' + s + '", "n": 1}'),
    "base64 wrapped at 76 (GNU)": lambda s: b64(f"export OPENAI_API_KEY={s}\n" * 3, wrap=76),
    "base64 wrapped, CRLF": lambda s: b64(f"cfg:{s}", wrap=20).replace("\n", "\r\n"),
    "base64 wrapped, quoted": lambda s: "> " + b64(f"key={s}", wrap=16).replace("\n", "\n> "),
    "hex lower": lambda s: s.encode().hex(),
    "hex upper": lambda s: s.encode().hex().upper(),
    "hex in a blob": lambda s: ("00ff" + s.encode().hex() + "0a").upper(),
    "xxd -p (60 cols)": lambda s: xxd_p(s + "\n"),
    "xxd -p -u": lambda s: xxd_p("x" + s, upper=True),
    "xxd": lambda s: hexdump(s + "\n", group=2, offset="{:08x}: ", ascii_column="xxd"),
    "xxd -g1": lambda s: hexdump("x" + s, group=1, offset="{:08x}: ", ascii_column="xxd"),
    "hexdump -C": lambda s: hexdump(s, group=1, offset="{:08x}  ", ascii_column="-C"),
    "od -An -tx1": lambda s: hexdump(s + "\n", group=1, offset=" "),
    "hexdump (swapped words)": lambda s: hexdump(s + "\n", group=2, offset="{:07x} ", swap=True),
    "percent quote()": lambda s: "https://h/?q=" + quote(s, safe=""),
    "percent every byte lower": lambda s: "".join(f"%{b:02x}" for b in s.encode()),
    "percent every byte upper": lambda s: "curl -d " + "".join(f"%{b:02X}" for b in s.encode()),
    "percent every other char": lambda s: "".join(f"%{ord(c):02X}" if i % 2 else c for i, c in enumerate(s)),
    "fold -w 10": lambda s: fold(s, 10) + "\n",
    "fold -w 8": lambda s: fold(s, 8),
    "fold -w 3": lambda s: fold(s, 3),
    "fold CRLF": lambda s: fold(s, 10, newline="\r\n"),
    "fold indented": lambda s: "  key:\n" + fold(s, 9, prefix="      "),
    "fold quoted > ": lambda s: fold(s, 12, prefix="> "),
    "fold trailing blanks": lambda s: fold(s, 11, newline="  \n"),
    "rot13": lambda s: codecs.encode(s, "rot13"),
    "upper case": lambda s: f"KEY={s.upper()}",
    "lower case": lambda s: f"key={s.lower()}",
    "rev": lambda s: s[::-1] + "\n",
    "rev in a line": lambda s: f"found {s[::-1]} here",
    "base64 then fold -w 10": lambda s: fold(b64(s), 10),
    "hex then fold -w 7": lambda s: fold(s.encode().hex(), 7),
}


def _cases() -> list[tuple[str, str, str]]:
    cases = []
    for form in FORMS:
        for name in SECRETS:
            cases.append((form, name, SECRETS[name]))
    return cases


@pytest.mark.parametrize(("form", "name", "secret"), _cases(), ids=[f"{f}-{n}" for f, n, _ in _cases()])
def test_encoded_secret_does_not_survive(form: str, name: str, secret: str) -> None:
    text = f"before line\n{FORMS[form](secret)}\nafter line"
    assert leaked(text, secret), f"control: the {form} text should show the {name}"
    out = redactor().text(text)
    assert not leaked(out, secret), out
    assert REDACTED in out
    assert out.startswith("before line\n") and out.endswith("\nafter line")


# Key-like values (20+ letters and digits, no blanks) also lose every piece of CORE_FRAGMENT characters.
KEY_LIKE = {"provider key": PROVIDER_KEY, "long key": LONG_KEY, "plain value": PLAIN_VALUE}
PIECES: dict[str, Callable[[str], str]] = {
    "fold -w 8 | nl": lambda s: "\n".join(f"{i + 1:6d} piece: {s[j:j + 8]}" for i, j in enumerate(range(0, len(s), 8))),
    "cut -c3- | fold -w 8 | sed 's/^/more: /'": lambda s: "\n".join(f"more: {s[2:][j:j + 8]}"
                                                                  for j in range(0, len(s) - 2, 8)),
    "halves in labelled lines": lambda s: f"first: {s[:len(s) // 2]}\nsecond half is {s[len(s) // 2:]}.",
    "one piece in a sentence": lambda s: f"near its end it has {s[-CORE_FRAGMENT - 2:-2]} I think",
}


@pytest.mark.parametrize(("form", "secret"), [(f, s) for f in PIECES for s in KEY_LIKE.values()],
                         ids=[f"{f}-{n}" for f in PIECES for n in KEY_LIKE])
def test_pieces_of_key_like_values_do_not_survive(form: str, secret: str) -> None:
    text = PIECES[form](secret)
    pieces = {secret[i:i + CORE_FRAGMENT] for i in range(len(secret) - CORE_FRAGMENT + 1)}
    # Pieces of only lower-case letters and punctuation ("sk-proj-", "plain-de") are words: they stay.
    pieces = {piece for piece in pieces if not re.fullmatch(r"[a-z_\-.]+", piece)}
    assert any(piece in text for piece in pieces)  # control
    out = redactor().text(text)
    assert not [piece for piece in pieces if piece in out], out
    assert REDACTED in out


def test_short_pieces_and_shared_prefixes_stay() -> None:
    text = f"OpenAI keys start with sk-proj-; ours ends in {PROVIDER_KEY[-CORE_FRAGMENT + 1:]}."
    assert redactor().text(text) == text


def test_every_form_decodes_back_to_the_whole_secret() -> None:
    """Stronger control than a fragment: each form's decodings contain the whole secret."""
    for form, encode in FORMS.items():
        for secret in SECRETS.values():
            views = decoded_views(encode(secret))
            assert any(secret.lower() in view.lower() if "case" in form else secret in view
                       for view in views), (form, secret)


def test_folded_redaction_keeps_the_line_structure() -> None:
    text = "key:\n" + fold(PROVIDER_KEY, 8) + "\nend"
    out = redactor().text(text)
    assert out.count("\n") == text.count("\n")
    assert out.splitlines()[1:-1] == [REDACTED] * (len(PROVIDER_KEY) // 8)


def test_values_added_later_get_their_forms_too() -> None:
    r = Redactor()
    text = b64(f"key={PLAIN_VALUE}")
    assert r.text(text) == text
    r.add(PLAIN_VALUE)
    assert not leaked(r.text(text), PLAIN_VALUE)


def test_secret_with_line_breaks_is_found_folded_or_not() -> None:
    pem_like = "MIIEowIBAAKCAQEAx9\nq2mW8rTn4vL1pKd7"
    r = Redactor([pem_like])
    assert PLAIN_VALUE not in r.text(pem_like)
    out = r.text(f"x {pem_like} y")
    assert "MIIEowIBAAKCAQEAx9" not in out and "q2mW8rTn4vL1pKd7" not in out


# --- things that must NOT be redacted ------------------------------------------------------------------

NEGATIVES: dict[str, str] = {
    "base64 of other data": b64("The quick brown fox jumps over the lazy dog. " * 4, wrap=76),
    "base64 of other key-shaped data": b64("sk-proj-NotTheKnownOne0123456789abcdefghij"),
    "url-safe base64 blob": base64.urlsafe_b64encode(bytes(range(256))).decode(),
    "sha256": "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855",
    "sha1 git": "commit 9fceb02d0ae598e95dc970b74767f19372d61af8\nAuthor: A <a@example.com>",
    "short git shas": "f604e9c db16b99 f309127 8c52146 9c89d5f",
    "md5 upper": "D41D8CD98F00B204E9800998ECF8427E",
    "uuid": "123e4567-e89b-12d3-a456-426614174000 and 6ba7b810-9dad-11d1-80b4-00c04fd430c8",
    "hexdump of other data": "\n".join(textwrap.wrap(b"GET /index.html HTTP/1.1\r\nHost: x\r\n".hex(), 60)),
    "percent-encoded URL": "https://example.com/search?q=caf%C3%A9%20au%20lait&lang=fr%2Dch",
    "folded prose": textwrap.fill("Redaction must leave ordinary text alone, " * 6, 30),
    "reversed words": "olleh dlrow gnirts desrever",
    "python code": textwrap.dedent("""\
        import os
        secret_key = os.environ["SECRET_KEY"]
        password = input("Password: ")
        token = get_token(user)
        api_key = os.environ.get("OPENAI_API_KEY")
        db.connect(password=pw, user=user)
        self.password = password
        def check(password: str, token: Optional[str] = None) -> bool:
            return password == expected
        max_tokens = 4096
        tokenizer = AutoTokenizer.from_pretrained(name)
        client_secret = settings.CLIENT_SECRET
        secret = secrets.token_hex(16)
    """),
    "shell with placeholders": 'export DB_PASSWORD="${DB_PASSWORD}"\ncurl -u "$USER:$TOKEN" https://api.example.com\n'
                               "password: {{ vault_db_password }}\ntoken=<your token here>\npasswd=********\n",
    "yaml references": "secretName: db-creds\nsecret_ref: prod/db\ntoken_url: https://auth.example.com/token\n"
                       "password: |\n",
    "json nulls": '{"password": null, "token": "", "secret": true}',
    "urls without passwords": "https://github.com:443/org/repo http://localhost:8080/x ssh://git@github.com/o/r.git "
                              "git@github.com:org/repo.git mailto:bob@example.com",
    "words around secret words": "bypass=1 compass: north monkey=12345 turnkey: yes passage=3",
    "comparison": 'if password == "admin": pass',
    "names about secrets": "secret_name = prod-db-7\nTOKEN_URL=https://auth.example.com/t1\nPASSWORD_FILE=/run/s/db1\n"
                           'secretRef: vault-77\npassword_min_length = 12\napi_key_id: AKID0000\n"tokens": 512\n',
    "env output": "PWD=/work/main\nOLDPWD=/tmp\nHOME=/root\nLANG=C.UTF-8\nTERM=dumb\n",
}


@pytest.mark.parametrize("text", list(NEGATIVES.values()), ids=list(NEGATIVES))
def test_ordinary_text_is_not_redacted(text: str) -> None:
    assert redactor().text(text) == text


# --- credential shapes without a known value ------------------------------------------------------------

# (text, the secret value that must go, what must stay)
SHAPES: list[tuple[str, str, str]] = [
    ("aws_secret_access_key = wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY", "wJalrXUtnFEMI", "aws_secret_access_key = "),
    ("AWS_SECRET_ACCESS_KEY=wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY", "wJalrXUtnFEMI", "AWS_SECRET_ACCESS_KEY="),
    ("export AWS_SECRET_ACCESS_KEY='wJalrXUtnFEMI/K7MDENG'", "wJalrXUtnFEMI", "export AWS_SECRET_ACCESS_KEY='"),
    ("[default]\naws_access_key_id = AKIAIOSFODNN7EXAMPLE\naws_secret_access_key=wJalrXUtnFEMIK7MDENG\n",
     "wJalrXUtnFEMIK7MDENG", "[default]\n"),
    ("client_secret: 9d8c7b6a5f4e", "9d8c7b6a5f4e", "client_secret: "),
    ("  client_secret: 'GOCSPX-abc_def-123'", "GOCSPX-abc_def-123", "  client_secret: '"),
    ('{"type": "service_account", "secret": "s3cr3t-v4lue-01", "name": "x"}', "s3cr3t-v4lue-01", '"name": "x"'),
    ('{"clientSecret":"Zq9-xY8_wV7"}', "Zq9-xY8_wV7", '{"clientSecret":"'),
    ('client_secret = "toml-secret-value-42"', "toml-secret-value-42", 'client_secret = "'),
    ("password=hunter2", "hunter2", "password="),
    ("PASSWORD=letmein", "letmein", "PASSWORD="),
    ("DB_PASSWORD=correct-horse-battery", "correct-horse-battery", "DB_PASSWORD="),
    ("passwd: s3cr3tpass", "s3cr3tpass", "passwd: "),
    ("pwd=Tr0ub4dor&3", "Tr0ub4dor", "pwd="),
    ("token=abcdef123456", "abcdef123456", "token="),
    ("GITHUB_TOKEN: gho_notaknownformat99", "gho_notaknownformat99", "GITHUB_TOKEN: "),
    ("X-Auth-Token: 0a1b2c3d4e5f", "0a1b2c3d4e5f", "X-Auth-Token: "),
    ('curl "https://x.io/api?user=bob&token=abc123xyz&page=2"', "abc123xyz", "&page=2"),
    ("mysql --password=Sup3rS3cret -u root", "Sup3rS3cret", "--password= -u root".replace("= ", f"={REDACTED} ")),
    ('connect(host="db", password="hunter2-literal")', "hunter2-literal", 'connect(host="db", password="'),
    ("'password' => 'php-secret-99'", "php-secret-99", "'password' => '"),
    ('echo {\\"password\\":\\"escaped-json-pw\\"}', "escaped-json-pw", 'echo {\\"password\\":\\"'),
    ("api_key=abcdefgh12345", "abcdefgh12345", "api_key="),
    ("apiKey: abcd1234efgh", "abcd1234efgh", "apiKey: "),
    ("private_key: MIIEvQIBADANBgkq", "MIIEvQIBADANBgkq", "private_key: "),
    ("Authorization: Basic dXNlcjpwYXNzd29yZA==", "dXNlcjpwYXNzd29yZA", "Authorization: "),
    ("DATABASE_URL=postgres://app:s3cret-pw@db:5432/app", "s3cret-pw", "postgres://app:"),
    ("redis://:r3dis-pass@cache:6379/0", "r3dis-pass", "@cache:6379/0"),
    ("git clone https://bob:ghs_notpatterned42@github.example.com/o/r.git", "ghs_notpatterned42", "https://bob:"),
    ("amqp://guest:gu3st!@rabbit/vhost and more", "gu3st!", "@rabbit/vhost and more"),
    # A random value that happens to spell like camelCase, with blanks around "=" (INI).
    ("aws_secret_access_key = wJalrXUtnFEMIabc123K7MDENGbPxRfiCYzA", "wJalrXUtnFEMIabc123", "aws_secret_access_key = "),
    # *_SECRET_*: the secret word in the middle of the name.
    ('OAUTH_CLIENT_SECRET_VALUE = "csQ1w2Hq93LmZp0aTr"', "csQ1w2Hq93LmZp0aTr", "OAUTH_CLIENT_SECRET_VALUE = "),
    ("SECRET_KEY_BASE=9f8e7d6c5b4a3f2e1d0c", "9f8e7d6c5b4a3f2e1d0c", "SECRET_KEY_BASE="),
    ("DB_PASSWORD_PROD: Xy7-prod-pass", "Xy7-prod-pass", "DB_PASSWORD_PROD: "),
    ('{"githubTokenRw": "gh-rw-123456"}', "gh-rw-123456", '{"githubTokenRw": "'),
]


@pytest.mark.parametrize(("text", "secret", "kept"), SHAPES, ids=[s[1] for s in SHAPES])
def test_credential_shapes_are_redacted_keeping_the_label(text: str, secret: str, kept: str) -> None:
    assert secret in text  # control
    out = Redactor().text(text)
    assert secret not in out, out
    assert kept in out and REDACTED in out, out


def test_placeholder_urls_and_values_stay() -> None:
    for text in ("postgres://user:${DB_PASS}@db/app", "https://user:<password>@host", "password=${PW}"):
        assert Redactor().text(text) == text


def test_hostile_inputs_stay_fast() -> None:
    """Shapes that make naive patterns quadratic: long runs of letters, many '://x:' and '%41'."""
    import time

    r = redactor()
    for text in ("a" * 1_000_000, "://a:" * 200_000, "%41" * 300_000 + "x", "token=" * 150_000,
                 ("p" * 5000 + "\n") * 200, "\n" * 1_000_000,
                 "\n" + " " * 1_000_000 + "ab cd",
                 # Hex-dump lines are decoded one by one (~7 us each): 30 000 is 3x a capped command output.
                 "\n 00 11" * 30_000,
                 # Near-copies of a key: each is extended character by character (200 KB: 3x a command output).
                 (LONG_KEY[:-1] + " ") * 1200):
        started = time.perf_counter()
        r.text(text)
        assert time.perf_counter() - started < 2.0, text[:20]


# --- more encodings: byte tokens, base32/85, uuencode, UTF-16/32 ------------------------------------------
# Each form comes with an independent decoder. Positive control: the decoder recovers the whole secret
# from the encoded text. After redaction it recovers nothing of it; unrelated text of the same shape
# (NEGATIVE_TEXT run through the same encoder) comes out byte for byte unchanged.

NEGATIVE_TEXT = "OPENAI_BASE_URL=https://api.example.com/v1 ; retries=3 ; model=gpt-x-2024\n"


def _wrap_tokens(tokens: list[str], per_line: int, sep: str, indent: str = "", line_end: str = "") -> str:
    lines = [sep.join(tokens[i:i + per_line]) for i in range(0, len(tokens), per_line)]
    return (line_end + "\n").join(indent + line for line in lines)


def xxd_i(data: str) -> str:
    """``xxd -i`` without a name: 12 bytes a line, ``0x73, 0x6b,`` indented by two blanks."""
    tokens = [f"0x{b:02x}" for b in data.encode()]
    return _wrap_tokens(tokens, 12, ", ", "  ", ",")


def od_tu1(data: str) -> str:
    return "\n".join("".join(f"{b:4d}" for b in data.encode()[i:i + 16]) for i in range(0, len(data.encode()), 16))


def od_b(data: str) -> str:
    return "\n".join("".join(f" {b:03o}" for b in data.encode()[i:i + 16]) for i in range(0, len(data.encode()), 16))


def uuencode(data: str, *, backtick: bool = False) -> str:
    raw = data.encode()
    return "".join(binascii.b2a_uu(raw[i:i + 45], backtick=backtick).decode() for i in range(0, len(raw), 45))


def _views_bytes(tokens: list[int]) -> str:
    return bytes(t for t in tokens if t < 256).decode("latin-1")


def _decode_c_hex(text: str) -> list[str]:
    return [_views_bytes([int(h, 16) for h in re.findall(r"(?:0x|\\x)([0-9a-fA-F]{2})", text)])]


def _decode_u_escapes(text: str) -> list[str]:
    return ["".join(chr(int(h, 16)) for h in re.findall(r"\\u([0-9a-fA-F]{4})", text))]


def _decode_decimal(text: str) -> list[str]:
    return [_views_bytes([int(d) for d in re.findall(r"(?<![\w.])\d{1,3}(?![\w.])", text)])]


def _decode_octal(text: str) -> list[str]:
    return [_views_bytes([int(o, 8) for o in re.findall(r"(?<![\w.])[0-3][0-7]{2}(?![\w.])", text)])]


def _decode_html(text: str) -> list[str]:
    return [html.unescape(text)]


def _decode_nul(text: str) -> list[str]:
    return [text.replace("\0", "")]


def _decode_runs(text: str, alphabet: str, group: int, decode: Callable[[str], bytes]) -> list[str]:
    views = []
    for run in re.findall(f"[{alphabet}]{{{group},}}", _FOLD.sub("", text)):
        for offset in range(group):
            chunk = run[offset:]
            chunk = chunk[: len(chunk) // group * group]
            with contextlib.suppress(ValueError, binascii.Error):
                views.append(decode(chunk).decode("latin-1"))
    return views


def _decode_b32(text: str) -> list[str]:
    return _decode_runs(text, "A-Z2-7=", 8, base64.b32decode)


def _decode_b85(text: str) -> list[str]:
    return _decode_runs(text, re.escape(string.digits + string.ascii_letters + "!#$%&()*+-;<=>?@^_`{|}~"), 5,
                        base64.b85decode)


def _decode_a85(text: str) -> list[str]:
    return _decode_runs(text, re.escape("".join(map(chr, range(33, 118)))), 5, base64.a85decode)


def _decode_uu(text: str) -> list[str]:
    views = []
    for line in text.splitlines():
        with contextlib.suppress(binascii.Error, ValueError):
            views.append(binascii.a2b_uu(line).decode("latin-1"))
    return ["".join(views)]


# form -> (encoder, independent decoder). Encoders get "<prefix><secret>\n" so the secret sits inside a
# longer encoded blob, at every alignment the prefixes below produce.
MORE_FORMS: dict[str, tuple[Callable[[str], str], Callable[[str], list[str]]]] = {
    "xxd -i (C array, wrapped)": (xxd_i, _decode_c_hex),
    "od -tx1 | sed 0x (no blanks)": (lambda s: _wrap_tokens([f"0x{b:02x}" for b in s.encode()], 16, ",", "", ","),
                                     _decode_c_hex),
    "\\x escapes": (lambda s: "".join(f"\\x{b:02x}" for b in s.encode()), _decode_c_hex),
    "\\x escapes upper": (lambda s: "".join(f"\\x{b:02X}" for b in s.encode()), _decode_c_hex),
    "\\u escapes": (lambda s: "".join(f"\\u{ord(c):04x}" for c in s), _decode_u_escapes),
    "od -An -tu1 (decimal bytes)": (od_tu1, _decode_decimal),
    "python list of bytes": (lambda s: str(list(s.encode())), _decode_decimal),
    "decimal bytes one a line": (lambda s: "\n".join(str(b) for b in s.encode()), _decode_decimal),
    "html entities decimal": (lambda s: "".join(f"&#{ord(c)};" for c in s), _decode_html),
    "html entities hex": (lambda s: "".join(f"&#x{ord(c):x};" for c in s), _decode_html),
    "od -An -b (octal bytes)": (od_b, _decode_octal),
    "utf-16le (iconv)": (lambda s: s.encode("utf-16-le").decode("latin-1"), _decode_nul),
    "utf-16be": (lambda s: s.encode("utf-16-be").decode("latin-1"), _decode_nul),
    "utf-32be": (lambda s: s.encode("utf-32-be").decode("latin-1"), _decode_nul),
    "utf-32le": (lambda s: s.encode("utf-32-le").decode("latin-1"), _decode_nul),
    "base32 -w0": (lambda s: base64.b32encode(s.encode()).decode(), _decode_b32),
    "base32 (76 cols)": (lambda s: "\n".join(textwrap.wrap(base64.b32encode(s.encode()).decode(), 76)), _decode_b32),
    "base85 (b85encode)": (lambda s: base64.b85encode(s.encode()).decode(), _decode_b85),
    "ascii85 (a85encode)": (lambda s: base64.a85encode(s.encode()).decode(), _decode_a85),
    "uuencode (binascii)": (uuencode, _decode_uu),
    "uuencode (GNU, backticks)": (lambda s: uuencode(s, backtick=True), _decode_uu),
}
# Base85 mixes 4 bytes into each 5 characters: a value of 8 bytes at an unlucky alignment has a single
# whole group of its own (5 characters), too short to search for.
ALIGNING_PREFIXES = ("", "k", "ke", "key", "key=")


def _more_cases() -> list[tuple[str, str, str]]:
    return [(form, name, prefix) for form in MORE_FORMS for name in SECRETS for prefix in ALIGNING_PREFIXES
            if not (name == "short value" and "85" in form and prefix)]


@pytest.mark.parametrize(("form", "name", "prefix"), _more_cases(), ids=[f"{f}-{n}-{len(p)}" for f, n, p in _more_cases()])
def test_more_encodings_of_a_secret_do_not_survive(form: str, name: str, prefix: str) -> None:
    encode, decode = MORE_FORMS[form]
    secret = SECRETS[name]
    text = f"before line\n{encode(prefix + secret + chr(10))}\nafter line"
    assert any(secret in view for view in decode(text)), f"control: {form} should show the {name}"
    out = redactor().text(text)
    assert not any(secret in view for view in decode(out)), out
    assert REDACTED in out and out.startswith("before line\n") and out.endswith("\nafter line"), out


@pytest.mark.parametrize("form", list(MORE_FORMS))
def test_same_shape_without_a_secret_is_left_alone(form: str) -> None:
    encode, decode = MORE_FORMS[form]
    text = f"before line\n{encode(NEGATIVE_TEXT)}\nafter line"
    assert any("api.example.com" in view for view in decode(text))  # control: the shape decodes
    assert redactor().text(text) == text


def test_byte_runs_lose_only_the_secret() -> None:
    """xxd -i / od -tu1 of a whole .env: the bytes around the key still decode (the output stays useful)."""
    env = f"OPENAI_API_KEY={PROVIDER_KEY}\nDEBUG=1\n"
    for encode, decode in (MORE_FORMS["xxd -i (C array, wrapped)"], MORE_FORMS["od -An -tu1 (decimal bytes)"]):
        out = redactor().text("unsigned char env[] = {\n" + encode(env) + "\n};")
        view = decode(out)[0]
        assert PROVIDER_KEY not in view and "OPENAI_API_KEY=" in view and "DEBUG=1" in view, out


def test_uuencoded_key_cut_short_still_goes() -> None:
    """uuencode of the first 45 bytes of a longer key-like value: pieces of it count, as raw pieces do."""
    text = binascii.b2a_uu(LONG_KEY.encode()[:45]).decode()
    assert LONG_KEY[:45] in _decode_uu(text)[0]  # control
    out = redactor().text(text)
    assert LONG_KEY[8:20] not in _decode_uu(out)[0] and REDACTED in out


NUMBERS_NEGATIVES = {
    "table of numbers": "  1   2   3   4   5   6   7   8\n 10  20  30  40  50  60  70  80\n",
    "ip addresses": "10.0.0.1 10.0.0.2 192.168.1.1 127.0.0.1 8.8.8.8 1.1.1.1",
    "od of a binary": od_tu1("\x00\x01\x02\x7f\x80\xff" * 8),
    "c array of a png header": xxd_i("\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR"),
    "escaped utf-8": "caf\\xc3\\xa9 na\\xc3\\xafve \\u00e9\\u00e8\\u00ea\\u00eb\\u00e0\\u00e2",
}


@pytest.mark.parametrize("text", list(NUMBERS_NEGATIVES.values()), ids=list(NUMBERS_NEGATIVES))
def test_numeric_text_is_not_redacted(text: str) -> None:
    assert redactor().text(text) == text


def test_hostile_byte_runs_stay_fast() -> None:
    """Runs of tokens are decoded whole: text that is nothing but tokens (3x a capped command output)."""
    import time

    r = redactor()
    for text in ("1 " * 100_000, "1\n" * 100_000, "0x41, " * 33_000, "\\x41" * 50_000, "&#65;" * 40_000,
                 " 101" * 50_000, ("M" + "A" * 60 + "\n") * 3200, "\0a" * 100_000):
        started = time.perf_counter()
        r.text(text)
        assert time.perf_counter() - started < 2.0, text[:20]
