"""The ``apply_patch`` tool: a multi-file Codex patch, confined, conflict-checked and accountable."""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, ConfigDict, Field

from k1412_ls.limits import LIMITS
from k1412_ls.tools.errors import ToolError
from k1412_ls.tools.facts import write_facts
from k1412_ls.tools.files.apply_patch.apply import PatchOutcome, apply_sections
from k1412_ls.tools.files.apply_patch.parser import PatchParseError, Section, parse_patch
from k1412_ls.tools.files.apply_patch.patch_targets import WorkspacePatchFiles, resolve_paths
from k1412_ls.tools.files.locks import write_guard
from k1412_ls.tools.registry import Tool, ToolContext, ToolResult

MAX_PATCH_BYTES = LIMITS.max_patch_bytes

DESCRIPTION = """\
Apply a multi-file patch (add, update, delete, move) in the Codex '*** Begin Patch' format. \
Paths are relative to the workspace. Example:
*** Begin Patch
*** Add File: docs/notes.md
+first line of the new file
*** Update File: src/app.py
*** Move to: src/main.py
@@ def handler():
-    return 1
+    return 2
*** Delete File: old.txt
*** End Patch
In an update, each chunk starts with '@@' (optionally '@@ <one line to find first>'); body lines \
start with ' ' (unchanged context, about 3 lines around each change), '-' (removed) or '+' \
(added). Put '*** End of File' after a chunk that must match the end of the file. Sections apply \
in order; a failing section stops the rest and earlier ones stay applied."""


class ApplyPatchArgs(BaseModel):
    """Arguments of apply_patch."""

    model_config = ConfigDict(extra="forbid")

    patch: str = Field(description="The whole patch text, from '*** Begin Patch' to '*** End Patch'.")


class PatchRefused(Exception):
    """The patch was refused before anything changed.

    ``str(exc)`` is the sentence for the model; ``codex_text`` is what upstream's CLI would print.
    """

    def __init__(self, message: str, codex_text: str | None = None) -> None:
        super().__init__(message)
        self.codex_text = codex_text if codex_text is not None else message


def run_patch(ctx: ToolContext, patch: str) -> PatchOutcome:
    """Parse, confine and apply ``patch``; raise :class:`PatchRefused` when nothing may change."""
    size = len(patch.encode("utf-8", "surrogatepass"))
    if size > MAX_PATCH_BYTES:
        raise PatchRefused(
            f"The patch is {size / 1_048_576:.1f} MB, over the 10 MB limit; "
            "split it into several smaller apply_patch calls."
        )
    try:
        sections: list[Section] = parse_patch(patch)
    except PatchParseError as exc:
        raise PatchRefused(f"{exc}; fix the patch and send it again (nothing was changed).", str(exc)) from None
    try:
        resolved = resolve_paths(ctx, sections)
        files = WorkspacePatchFiles(ctx, resolved)
        with write_guard(ctx):
            files.preflight(sections)
            return apply_sections(sections, files, ctx.cancel.is_set)
    except ToolError as exc:
        raise PatchRefused(f"Nothing was changed: {exc}", str(exc)) from None


def describe_failure(outcome: PatchOutcome) -> str:
    """One sentence for the model: upstream's message, what to do, what was already applied."""
    failure = outcome.failure
    assert failure is not None
    text = failure.message.rstrip(".")
    if failure.hint:
        text += f"; {failure.hint}"
    if outcome.applied:
        done = ", ".join(outcome.summary_lines())
        text += f"; the sections before it were applied ({done}), so resend only the remaining sections"
    else:
        text += "; nothing was changed"
    text += "."
    if failure.detail:
        text += f" The expected lines were:\n{failure.detail}"
    return text


def apply_patch(args: ApplyPatchArgs, ctx: ToolContext) -> ToolResult:
    """Tool handler: apply ``args.patch`` inside the workspace."""
    try:
        outcome = run_patch(ctx, args.patch)
    except PatchRefused as exc:
        return ToolResult.failure(str(exc), facts=write_facts([]), applied=[], files=[])
    facts = write_facts([item.entry for item in outcome.applied])
    fields: dict[str, Any] = {"summary": "\n".join(outcome.summary_lines()), "files": outcome.files()}
    if outcome.ok:
        return ToolResult.success(facts=facts, **fields)
    return ToolResult.failure(describe_failure(outcome), facts=facts, applied=outcome.summary_lines(), **fields)


TOOLS: list[Tool] = [
    Tool(
        name="apply_patch",
        description=DESCRIPTION,
        args_model=ApplyPatchArgs,
        handler=apply_patch,
        parallel_safe=False,
        read_only=False,
        tags=frozenset({"core"}),
        body_fields=frozenset({"patch"}),
    )
]
