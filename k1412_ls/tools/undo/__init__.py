"""Undo: what a run changed (change tracking around commands, pre-images before the first change to each
path), the content-addressed undo store, and putting paths back on disk.

May import ``tools.files`` (documents and locks) and the tool seams; never ``tools.processes`` or
``tools.approval``.
"""
