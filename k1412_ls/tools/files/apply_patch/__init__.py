"""The ``apply_patch`` tool: OpenAI Codex's ``*** Begin Patch`` format, applied inside the workspace.

``parser`` turns text into sections, ``seek`` finds lines, ``apply`` computes
new contents, ``files`` confines and writes through the document store, and
``tool`` exposes it to the agent (``TOOLS``). ``python -m
k1412_ls.tools.files.apply_patch`` is a Codex-compatible command line.
"""

from k1412_ls.tools.files.apply_patch.tool import TOOLS, ApplyPatchArgs, PatchRefused, apply_patch, run_patch

__all__ = ["TOOLS", "ApplyPatchArgs", "PatchRefused", "apply_patch", "run_patch"]
