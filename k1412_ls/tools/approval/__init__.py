"""Approval: the policy that decides which commands run at once, which are asked about and which never
run, and how it reads a command line and the scripts it runs.

May import ``tools.sandbox`` (what a grant widens) and the leaf utilities; never the file, process or undo
tools.
"""
