"""``python -m k1412_ls.lsp [--tcp HOST:PORT]``: the language server without the CLI's imports."""

from __future__ import annotations

import sys

from k1412_ls.lsp.server import serve


def main(argv: list[str] | None = None) -> int:
    """Parse ``--tcp HOST:PORT`` and serve."""
    args = sys.argv[1:] if argv is None else argv
    if args[:1] == ["--tcp"] and len(args) == 2:
        return serve(tcp=args[1])
    if args:
        print("usage: python -m k1412_ls.lsp [--tcp HOST:PORT]", file=sys.stderr)
        return 2
    return serve()


if __name__ == "__main__":
    sys.exit(main())
