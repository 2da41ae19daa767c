"""``python -m k1412_ls …``: the command line (``k1412_ls.cli``); ``python -m k1412_ls lsp`` is the server."""

from k1412_ls.cli import main

raise SystemExit(main())
