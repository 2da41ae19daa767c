"""The environment a child process sees: no credentials, no prompts, no pagers.

Commands the model runs inherit this instead of the server's environment, so
a ``printenv`` (or a malicious build script) cannot read provider keys, and
nothing waits for a terminal that does not exist.
"""

from __future__ import annotations

import os
import re
from collections.abc import Iterable, Mapping

from k1412_ls.text.redact import Redactor, is_secret_env_name

# Provider key variables are dropped even if a future name check would miss them.
PROVIDER_KEY_NAMES: frozenset[str] = frozenset({
    "OPENAI_API_KEY", "DEEPSEEK_API_KEY", "ANTHROPIC_API_KEY", "AZURE_OPENAI_API_KEY",
    "OPENROUTER_API_KEY", "GROQ_API_KEY", "MISTRAL_API_KEY", "GEMINI_API_KEY", "GOOGLE_API_KEY",
    "TOGETHER_API_KEY", "FIREWORKS_API_KEY", "XAI_API_KEY", "HF_TOKEN", "HUGGING_FACE_HUB_TOKEN",
    "OPENAI_ORG_ID", "OPENAI_ORGANIZATION", "OPENAI_PROJECT_ID",
})

# Variables that would make a child prompt, page, colour its output or pick a GUI helper.
_INTERACTIVE_NAMES: frozenset[str] = frozenset({
    "GIT_ASKPASS", "SSH_ASKPASS", "SUDO_ASKPASS", "DISPLAY", "WAYLAND_DISPLAY", "LESS", "MORE",
    "CLICOLOR_FORCE", "FORCE_COLOR",
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


def looks_secret(name: str, value: str, redactor: Redactor | None = None) -> bool:
    """True when a variable's name or value looks like a credential."""
    if name in PROVIDER_KEY_NAMES or is_secret_env_name(name):
        return True
    if _URL_CREDENTIALS.search(value):
        return True
    return (redactor or _PATTERNS_ONLY).text(value) != value


_PATTERNS_ONLY = Redactor()


def scrubbed_env(base: Mapping[str, str] | None = None, extra_secret_names: Iterable[str] = (),
                 redactor: Redactor | None = None) -> dict[str, str]:
    """A copy of ``base`` (default: this process's environment) safe to hand to a child.

    Drops provider keys, secret-looking names and values (including
    ``extra_secret_names``, e.g. the configured ``api_key_env`` variables, and
    any value ``redactor`` would redact, e.g. the run's known key values),
    interactive helpers, and sets :data:`NON_INTERACTIVE`.
    """
    source = os.environ if base is None else base
    extra = set(extra_secret_names)
    env = {
        name: value
        for name, value in source.items()
        if name not in extra and name not in _INTERACTIVE_NAMES and not looks_secret(name, value, redactor)
    }
    env.update(NON_INTERACTIVE)
    env.setdefault("PATH", os.defpath)
    return env
