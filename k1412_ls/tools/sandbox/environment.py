"""The environment a child process sees: an allow list of known-safe variables, no prompts, no pagers.

Commands the model runs get only the variables named here (:data:`SAFE_NAMES`,
the families in :data:`SAFE_PREFIXES`) and those the user names in their own
configuration (``[sandbox] env = [...]``), never "everything minus a pattern
list": a credential under a name nobody thought of (``MYSQL_PWD``,
``SSHPASS``, ``BORG_PASSPHRASE``, ``SLACK_WEBHOOK_URL``) is simply not passed.
An allowed variable whose value still looks like a credential (a proxy URL
with a password, a key pasted into ``PIP_INDEX_URL``) is withheld too unless
the user named it. ``PATH`` loses its relative and empty entries
(:func:`clean_path`). What was withheld and looks secret is taught to the
run's redactor (:func:`withheld_secrets`), so it cannot reach the log under
another name either.
"""

from __future__ import annotations

import os
import re
from collections.abc import Iterable, Mapping

from k1412_ls.text.redact import Redactor, is_secret_env_name

# Provider key variables are never passed, even when the user names them.
PROVIDER_KEY_NAMES: frozenset[str] = frozenset({
    "OPENAI_API_KEY", "DEEPSEEK_API_KEY", "ANTHROPIC_API_KEY", "AZURE_OPENAI_API_KEY",
    "OPENROUTER_API_KEY", "GROQ_API_KEY", "MISTRAL_API_KEY", "GEMINI_API_KEY", "GOOGLE_API_KEY",
    "TOGETHER_API_KEY", "FIREWORKS_API_KEY", "XAI_API_KEY", "HF_TOKEN", "HUGGING_FACE_HUB_TOKEN",
    "OPENAI_ORG_ID", "OPENAI_ORGANIZATION", "OPENAI_PROJECT_ID",
})

# Passed when set (and their values do not look like credentials): the session, the locale, and what
# compilers, interpreters and package managers read to find themselves and their caches.
SAFE_NAMES: frozenset[str] = frozenset({
    # the session and the locale
    "PATH", "HOME", "USER", "LOGNAME", "SHELL", "LANG", "LANGUAGE", "TZ", "TZDIR", "CI", "SOURCE_DATE_EPOCH",
    "XDG_CONFIG_HOME", "XDG_CACHE_HOME", "XDG_DATA_HOME", "XDG_STATE_HOME", "XDG_DATA_DIRS", "XDG_CONFIG_DIRS",
    # TLS trust stores (paths), which pip, requests, curl, git and node read when the network is on
    "SSL_CERT_FILE", "SSL_CERT_DIR", "REQUESTS_CA_BUNDLE", "CURL_CA_BUNDLE", "GIT_SSL_CAINFO", "NODE_EXTRA_CA_CERTS",
    # proxies (one with a password in its URL is withheld unless named)
    "http_proxy", "https_proxy", "no_proxy", "HTTP_PROXY", "HTTPS_PROXY", "NO_PROXY", "ALL_PROXY", "all_proxy",
    # Python
    "VIRTUAL_ENV", "VIRTUAL_ENV_PROMPT", "CONDA_PREFIX", "CONDA_DEFAULT_ENV", "CONDA_EXE", "CONDA_PYTHON_EXE",
    "CONDA_SHLVL", "PIPX_HOME", "PIPX_BIN_DIR", "POETRY_HOME", "POETRY_CACHE_DIR", "POETRY_VIRTUALENVS_IN_PROJECT",
    "UV_CACHE_DIR", "UV_PYTHON", "UV_PYTHON_INSTALL_DIR", "UV_TOOL_DIR", "UV_OFFLINE", "UV_NO_CACHE",
    # Node
    "NODE_PATH", "NODE_OPTIONS", "NODE_ENV", "NVM_DIR", "NVM_BIN", "NVM_INC", "NVM_CD_FLAGS", "COREPACK_HOME",
    "PNPM_HOME", "YARN_CACHE_FOLDER", "NPM_CONFIG_CACHE", "npm_config_cache", "NPM_CONFIG_PREFIX",
    "npm_config_prefix",
    # C and C++ builds
    "CC", "CXX", "CPP", "LD", "AR", "AS", "NM", "RANLIB", "STRIP", "OBJCOPY", "CFLAGS", "CXXFLAGS", "CPPFLAGS",
    "LDFLAGS", "LDLIBS", "LIBS", "MAKEFLAGS", "MFLAGS", "PKG_CONFIG_PATH", "PKG_CONFIG_LIBDIR", "LD_LIBRARY_PATH",
    "LIBRARY_PATH", "CPATH", "C_INCLUDE_PATH", "CPLUS_INCLUDE_PATH", "CCACHE_DIR", "CMAKE_PREFIX_PATH",
    "CMAKE_GENERATOR", "CMAKE_BUILD_PARALLEL_LEVEL",
    # Rust
    "CARGO_HOME", "RUSTUP_HOME", "RUSTUP_TOOLCHAIN", "RUSTFLAGS", "RUSTDOCFLAGS", "RUST_BACKTRACE", "RUST_LOG",
    "CARGO_TARGET_DIR", "CARGO_BUILD_JOBS", "CARGO_NET_OFFLINE", "CARGO_INCREMENTAL", "RUSTC_WRAPPER",
    # Go
    "GOPATH", "GOROOT", "GOCACHE", "GOMODCACHE", "GOFLAGS", "GOPROXY", "GOPRIVATE", "GONOSUMDB", "GONOPROXY",
    "GOSUMDB", "GOTOOLCHAIN", "GO111MODULE", "GOOS", "GOARCH", "CGO_ENABLED", "GOTMPDIR",
    # Java
    "JAVA_HOME", "GRADLE_USER_HOME", "MAVEN_HOME", "M2_HOME",
    # git identity (never GIT_CONFIG_*: it defines aliases and helpers)
    "GIT_AUTHOR_NAME", "GIT_AUTHOR_EMAIL", "GIT_COMMITTER_NAME", "GIT_COMMITTER_EMAIL",
})
# Families passed by prefix: locale categories and interpreter settings. Their names are also checked
# (a PIP_..._PASSWORD or PYTHON..._TOKEN is withheld), unlike the exact names above.
SAFE_PREFIXES: tuple[str, ...] = ("LC_", "PYTHON", "PIP_", "PYENV", "RUSTUP_")

# Variables that would make a child prompt, page, colour its output or pick a GUI helper.
_INTERACTIVE_NAMES: frozenset[str] = frozenset({
    "GIT_ASKPASS", "SSH_ASKPASS", "SUDO_ASKPASS", "DISPLAY", "WAYLAND_DISPLAY", "LESS", "MORE",
    "CLICOLOR_FORCE", "FORCE_COLOR", "PYTHONSTARTUP", "PYTHONINSPECT",
})

# Set in every child: fail instead of waiting for input nobody will type.
NON_INTERACTIVE: dict[str, str] = {
    "GIT_TERMINAL_PROMPT": "0",
    "GIT_EDITOR": "true",
    "GIT_SEQUENCE_EDITOR": "true",
    "GIT_PAGER": "cat",
    "PAGER": "cat",
    "MANPAGER": "cat",
    "SYSTEMD_PAGER": "",
    "TERM": "dumb",
    "NO_COLOR": "1",
    "DEBIAN_FRONTEND": "noninteractive",
    "PIP_NO_INPUT": "1",
    "SSH_ASKPASS_REQUIRE": "never",
    # Background output should reach process_poll as it is produced, not when a buffer fills.
    "PYTHONUNBUFFERED": "1",
}

# user:password@ in a URL-valued variable (DATABASE_URL=postgres://u:p@host) is a credential too.
_URL_CREDENTIALS = re.compile(r"[a-z][a-z0-9+.\-]*://[^/\s:@]+:[^/\s@]+@", re.I)
# A value shaped like a generated credential whatever its name: 16+ characters of a token alphabet, not
# a path; mixed case with digits, 32+ hex digits, or 24+ characters with 4+ digits.
_TOKEN_SHAPE = re.compile(r"(?![/~.])[A-Za-z0-9_\-+/=.:~]{16,}")
_HEX = re.compile(r"[0-9a-fA-F]{32,}")


def looks_secret(name: str, value: str, redactor: Redactor | None = None) -> bool:
    """True when a variable's name or value looks like a credential."""
    if name in PROVIDER_KEY_NAMES or is_secret_env_name(name):
        return True
    return value_looks_secret(value, redactor)


def value_looks_secret(value: str, redactor: Redactor | None = None) -> bool:
    """True when a value (whatever its name) is or holds a credential: a URL password, a known key or shape."""
    if _URL_CREDENTIALS.search(value):
        return True
    return (redactor or _PATTERNS_ONLY).text(value) != value


def _token_shaped(value: str) -> bool:
    if not _TOKEN_SHAPE.fullmatch(value) or value.count("/") > 1:
        return False
    digits = sum(c.isdigit() for c in value)
    mixed = any(c.islower() for c in value) and any(c.isupper() for c in value)
    return bool(_HEX.fullmatch(value)) or (mixed and digits > 0) or (len(value) >= 24 and digits >= 4)


_PATTERNS_ONLY = Redactor()


def allowed_name(name: str) -> bool:
    """Whether ``name`` is on the built-in allow list (an exact name, or a family whose name is not secret)."""
    if name in SAFE_NAMES:
        return True
    return name.startswith(SAFE_PREFIXES) and not is_secret_env_name(name) and name not in _INTERACTIVE_NAMES


def clean_path(value: str) -> tuple[str, list[str]]:
    """``PATH`` without relative and empty entries (an empty entry means the current directory).

    Returns the cleaned value and the entries dropped. A relative entry such as
    ``node_modules/.bin`` would make a program planted in *any* directory a
    command changes into run under a familiar name (``git``).
    """
    kept: list[str] = []
    dropped: list[str] = []
    for entry in value.split(":"):
        if entry.startswith("/"):
            if entry not in kept:
                kept.append(entry)
        elif entry not in dropped:
            dropped.append(entry)
    return ":".join(kept) or os.defpath, dropped


def scrubbed_env(base: Mapping[str, str] | None = None, extra_secret_names: Iterable[str] = (),
                 redactor: Redactor | None = None, passed: Iterable[str] = ()) -> dict[str, str]:
    """The environment for a child, built from ``base`` (default: this process's environment).

    Only allowed variables (:func:`allowed_name`) whose values do not look like
    credentials, plus the variables in ``passed`` (the user's ``[sandbox] env``,
    passed as they are, but never a provider key or one of
    ``extra_secret_names``, e.g. the configured ``api_key_env`` variables);
    ``PATH`` cleaned (:func:`clean_path`); :data:`NON_INTERACTIVE` set.
    """
    source = os.environ if base is None else base
    never = set(extra_secret_names) | PROVIDER_KEY_NAMES | _INTERACTIVE_NAMES
    named = set(passed)
    env: dict[str, str] = {}
    for name, value in source.items():
        if name in never:
            continue
        if name in named or (allowed_name(name) and not value_looks_secret(value, redactor)):
            env[name] = value
    env.update(NON_INTERACTIVE)
    env["PATH"] = clean_path(env.get("PATH", os.defpath))[0]
    return env


def withheld_secrets(base: Mapping[str, str], env: Mapping[str, str], redactor: Redactor | None = None) -> set[str]:
    """Values worth teaching the redactor: passed ones that look secret, and withheld ones that look secret.

    A withheld value is learned when its name looks secret, when it holds a
    credential shape or a URL password (the password itself is learned), or
    when it is shaped like a generated token (16+ characters of letters and
    digits, not a path or a dotted name) whatever its name. Ordinary withheld
    values (``CONTAINER_NAME=web``, ``EDITOR=vim``) are not: they would
    redact ordinary output.
    """
    learned: set[str] = set()
    for name, value in base.items():
        if len(value) < 6:
            continue
        if name in env and env[name] == value and name not in NON_INTERACTIVE:
            if looks_secret(name, value, redactor):
                learned.add(value)
            continue
        if looks_secret(name, value, redactor) or _token_shaped(value):
            learned.add(value)
        for match in re.finditer(r"://[^/\s:@]+:([^/\s@]+)@", value):
            learned.add(match.group(1))
    return {v for v in learned if len(v) >= 6}


__all__ = ["NON_INTERACTIVE", "PROVIDER_KEY_NAMES", "SAFE_NAMES", "SAFE_PREFIXES", "allowed_name", "clean_path",
           "looks_secret", "scrubbed_env", "value_looks_secret", "withheld_secrets"]
