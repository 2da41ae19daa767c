"""Processes: run_command, the background process tools and their table, child process plumbing,
bounded output capture and the observed exit statuses of what a command line starts.

May import ``tools.sandbox`` (every model command runs confined), ``tools.approval`` (what must be asked),
``tools.undo`` (the change tracking around a command), ``tools.files`` and the tool seams.
"""
