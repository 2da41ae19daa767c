"""Defensive normalization and retry guards.

- :func:`normalize_arguments` repairs unambiguous formatting slips before policy;
- :class:`GuardState` refuses interactive commands, documents run as programs,
  Python that does not parse and unchanged retries, and skips identical writes;
- :func:`find_duplicate_commands` lets the scheduler run a repeated command once;

Every refusal is an ``ok: false`` result whose ``error`` is one sentence
saying what to do instead; its facts are ``{"kind": "guard", "guard": name}``.
"""

from k1412_ls.core.guards.command_guards import (
    check_command,
    command_text_key,
    find_duplicate_commands,
    is_inspection,
)
from k1412_ls.core.guards.escapes import decode_edit_pair, decode_patch_text, decode_source_text
from k1412_ls.core.guards.normalize import normalize_arguments, normalize_path
from k1412_ls.core.guards.state import GuardState, diagnostic_signature
from k1412_ls.core.guards.writes import python_syntax_error

__all__ = [
    "GuardState",
    "check_command",
    "command_text_key",
    "decode_edit_pair",
    "decode_patch_text",
    "decode_source_text",
    "diagnostic_signature",
    "find_duplicate_commands",
    "is_inspection",
    "normalize_arguments",
    "normalize_path",
    "python_syntax_error",
]
