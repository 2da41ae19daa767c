"""One shell model for guards and gate (see ``parse``): what a bash line runs, and whose exit status counts."""

from k1412_ls.shell.parse import MAX_CACHED_CHARS, ShellLine, Simple, normalized_text, parse_line
from k1412_ls.shell.words import SHELLS, WRAPPERS, git_subcommand, program_name, strip_wrappers, word_value

__all__ = ["MAX_CACHED_CHARS", "SHELLS", "WRAPPERS", "ShellLine", "Simple", "git_subcommand",
           "normalized_text", "parse_line", "program_name", "strip_wrappers", "word_value"]
