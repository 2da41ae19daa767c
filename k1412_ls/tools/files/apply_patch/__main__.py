"""``python -m k1412_ls.tools.files.apply_patch [PATCH]``: apply a patch in the current directory.

Reads the patch from stdin when no argument is given. Prints upstream's
messages; exit status 0 on success, 1 on failure, 2 on a usage error.
"""

from __future__ import annotations

import os
import sys

from k1412_ls.tools.files.apply_patch.tool import PatchRefused, run_patch
from k1412_ls.tools.files.documents import DiskDocumentStore
from k1412_ls.tools.files.workspace import Workspace
from k1412_ls.tools.registry import ToolContext

USAGE = (
    "Usage: python -m k1412_ls.tools.files.apply_patch 'PATCH'\n"
    "       echo 'PATCH' | python -m k1412_ls.tools.files.apply_patch"
)


def main(argv: list[str] | None = None) -> int:
    """Run the command line; return the exit status."""
    args = sys.argv[1:] if argv is None else argv
    if args in (["-h"], ["--help"]):
        print(USAGE)
        return 0
    if len(args) > 1:
        print(USAGE, file=sys.stderr)
        return 2
    if args:
        patch = args[0]
    else:
        try:
            patch = sys.stdin.buffer.read().decode("utf-8")
        except UnicodeDecodeError:
            print("The patch on stdin is not valid UTF-8.", file=sys.stderr)
            return 1
        if not patch:
            print(USAGE, file=sys.stderr)
            return 2
    ctx = ToolContext(workspace=Workspace(os.getcwd()), documents=DiskDocumentStore(), user="cli")
    try:
        outcome = run_patch(ctx, patch)
    except PatchRefused as exc:
        print(exc.codex_text, file=sys.stderr)
        return 1
    if outcome.failure is not None:
        print(outcome.failure.codex_text, file=sys.stderr)
        return 1
    print("Success. Updated the following files:")
    for line in outcome.summary_lines():
        print(line)
    return 0


if __name__ == "__main__":
    sys.exit(main())
