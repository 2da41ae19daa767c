"""Everything that confines a command: the bubblewrap sandbox, its mounts, the seccomp filter, the covers
over hidden paths, the launcher and process cap, the kept sandboxes started ahead of a command or a search.

A module here may import ``tools.errors``, the leaf utilities (``text``, ``shell``, ``limits``,
``locations``) and other modules of this package; never a file tool, a process tool, the approval policy
or undo. ``command_stage`` and ``reader_spawner`` also run as plain scripts inside a sandbox, importing
only their sibling ``covers`` by path.
"""
