"""Leaf text utilities: redaction of secrets, numbers and units in text, path vocabulary, test-runner summaries.

Nothing here imports the tools, the core or an adapter; every layer above may use it.
"""
