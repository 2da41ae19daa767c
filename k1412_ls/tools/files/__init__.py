"""Files: the DocumentStore port (editor buffers or disk), path confinement at check and at open time,
the file tools (stat_path, list_files, read_file, write_file), patch_file, apply_patch, search_files with
its ignore matcher, line windows and the workspace write locks.

May import ``tools.sandbox`` (which paths are hidden or protected; the readers' sandbox for ripgrep),
``tools.processes`` (search runs ripgrep like a command), the tool seams and the leaf utilities; never
``tools.undo`` or ``tools.approval``.
"""
