"""Parse a Codex ``*** Begin Patch`` text into sections, touching nothing.

The grammar and its leniencies follow upstream's ``parser.rs`` as described in
``conformance/codex-apply-patch/README.md``: the whole text is trimmed, each
boundary marker line is compared trimmed, a heredoc wrapper (``<<'EOF'`` …
``EOF``) is tolerated, section headers may be indented, and the first chunk
of an update may omit its ``@@`` line. Error messages are upstream's, word
for word, because models are trained on them.
"""

from __future__ import annotations

from dataclasses import dataclass

# Rust's `char::is_whitespace` (Unicode White_Space). Python's str.strip() would
# also strip U+001C..U+001F, which upstream keeps, so the set is spelled out.
RUST_WHITESPACE = (
    "\t\n\x0b\x0c\r \x85\xa0\u1680\u2000\u2001\u2002\u2003\u2004\u2005\u2006\u2007"
    "\u2008\u2009\u200a\u2028\u2029\u202f\u205f\u3000"
)

BEGIN_PATCH = "*** Begin Patch"
END_PATCH = "*** End Patch"
ADD_FILE = "*** Add File: "
DELETE_FILE = "*** Delete File: "
UPDATE_FILE = "*** Update File: "
MOVE_TO = "*** Move to: "
END_OF_FILE = "*** End of File"
CONTEXT_MARKER = "@@ "
EMPTY_CONTEXT_MARKER = "@@"
HEREDOC_OPENERS = ("<<EOF", "<<'EOF'", '<<"EOF"')


@dataclass(frozen=True)
class AddFile:
    """``*** Add File``: create (or overwrite) ``path`` with ``contents``."""

    path: str
    contents: str

    @property
    def header(self) -> str:
        return f"{ADD_FILE}{self.path}"


@dataclass(frozen=True)
class DeleteFile:
    """``*** Delete File``: remove the regular file ``path``."""

    path: str

    @property
    def header(self) -> str:
        return f"{DELETE_FILE}{self.path}"


@dataclass(frozen=True)
class UpdateChunk:
    """One ``@@`` chunk: ``old_lines`` (context and removals) become ``new_lines``."""

    context: str | None
    old_lines: tuple[str, ...]
    new_lines: tuple[str, ...]
    is_end_of_file: bool = False


@dataclass(frozen=True)
class UpdateFile:
    """``*** Update File`` with its chunks, optionally moved to ``move_to``."""

    path: str
    move_to: str | None
    chunks: tuple[UpdateChunk, ...]

    @property
    def header(self) -> str:
        return f"{UPDATE_FILE}{self.path}"


Section = AddFile | DeleteFile | UpdateFile


class PatchParseError(Exception):
    """The patch text is not valid; ``line`` is 1-based (line 1 is ``*** Begin Patch``)."""

    def __init__(self, message: str, line: int | None = None) -> None:
        super().__init__(message)
        self.message = message
        self.line = line

    def __str__(self) -> str:
        if self.line is None:
            return f"Invalid patch: {self.message}"
        return f"Invalid patch hunk on line {self.line}: {self.message}"


def rust_trim(text: str) -> str:
    """``str::trim`` as Rust defines it."""
    return text.strip(RUST_WHITESPACE)


def split_patch_lines(text: str) -> list[str]:
    """Rust's ``str::lines``: split on ``\\n``, dropping one ``\\r`` before each ``\\n``."""
    if not text:
        return []
    pieces = text.split("\n")
    if pieces[-1] == "":
        pieces.pop()
    last = len(pieces) - 1
    has_final_newline = text.endswith("\n")
    return [
        piece[:-1] if piece.endswith("\r") and (index < last or has_final_newline) else piece
        for index, piece in enumerate(pieces)
    ]


def _check_boundaries(lines: list[str], start: int, stop: int) -> None:
    first = rust_trim(lines[start]) if stop > start else None
    last = rust_trim(lines[stop - 1]) if stop > start else None
    if first == BEGIN_PATCH and last == END_PATCH:
        return
    if first != BEGIN_PATCH:
        raise PatchParseError("The first line of the patch must be '*** Begin Patch'")
    raise PatchParseError("The last line of the patch must be '*** End Patch'")


def _envelope(lines: list[str]) -> tuple[int, int]:
    """Return the [start, stop) range of the Begin..End lines, unwrapping a heredoc if needed."""
    try:
        _check_boundaries(lines, 0, len(lines))
        return 0, len(lines)
    except PatchParseError as strict_error:
        if (len(lines) >= 4 and lines[0] in HEREDOC_OPENERS and lines[-1].endswith("EOF")):
            _check_boundaries(lines, 1, len(lines) - 1)
            return 1, len(lines) - 1
        raise strict_error from None


def parse_patch(text: str) -> list[Section]:
    """Parse the whole patch or raise :class:`PatchParseError`; an empty patch gives ``[]``."""
    lines = split_patch_lines(rust_trim(text))
    start, stop = _envelope(lines)
    sections: list[Section] = []
    index = start + 1
    end = stop - 1
    while index < end:
        line_number = index - start + 1
        section, used = _parse_section(lines, index, end, line_number)
        sections.append(section)
        index += used
    return sections


def _parse_section(lines: list[str], index: int, end: int, line_number: int) -> tuple[Section, int]:
    header = rust_trim(lines[index])
    if header.startswith(ADD_FILE):
        body: list[str] = []
        cursor = index + 1
        while cursor < end and lines[cursor].startswith("+"):
            body.append(lines[cursor][1:])
            cursor += 1
        contents = "".join(f"{line}\n" for line in body)
        return AddFile(header[len(ADD_FILE):], contents), cursor - index
    if header.startswith(DELETE_FILE):
        return DeleteFile(header[len(DELETE_FILE):]), 1
    if header.startswith(UPDATE_FILE):
        return _parse_update(lines, index, end, line_number, header[len(UPDATE_FILE):])
    raise PatchParseError(
        f"'{header}' is not a valid hunk header. Valid hunk headers: '*** Add File: {{path}}', "
        "'*** Delete File: {path}', '*** Update File: {path}'",
        line_number,
    )


def _parse_update(lines: list[str], index: int, end: int, line_number: int, path: str) -> tuple[Section, int]:
    cursor = index + 1
    move_to: str | None = None
    # Upstream does not trim the Move line: it must start at column 0.
    if cursor < end and lines[cursor].startswith(MOVE_TO):
        move_to = lines[cursor][len(MOVE_TO):]
        cursor += 1
    chunks: list[UpdateChunk] = []
    while cursor < end:
        if rust_trim(lines[cursor]) == "":
            cursor += 1
            continue
        if lines[cursor].startswith("***"):
            break
        chunk, used = _parse_chunk(lines, cursor, end, line_number + (cursor - index), not chunks)
        chunks.append(chunk)
        cursor += used
    if not chunks:
        raise PatchParseError(f"Update file hunk for path '{path}' is empty", line_number)
    return UpdateFile(path, move_to, tuple(chunks)), cursor - index


def _parse_chunk(lines: list[str], index: int, end: int, line_number: int,
                 allow_missing_context: bool) -> tuple[UpdateChunk, int]:
    first = lines[index]
    context: str | None = None
    body_start = index
    if first == EMPTY_CONTEXT_MARKER:
        body_start += 1
    elif first.startswith(CONTEXT_MARKER):
        context = first[len(CONTEXT_MARKER):]
        body_start += 1
    elif not allow_missing_context:
        raise PatchParseError(
            f"Expected update hunk to start with a @@ context marker, got: '{first}'", line_number
        )
    if body_start >= end:
        raise PatchParseError("Update hunk does not contain any lines", line_number + 1)
    old: list[str] = []
    new: list[str] = []
    is_eof = False
    cursor = body_start
    while cursor < end:
        line = lines[cursor]
        if line == END_OF_FILE:
            if cursor == body_start:
                raise PatchParseError("Update hunk does not contain any lines", line_number + 1)
            is_eof = True
            cursor += 1
            break
        marker = line[:1]
        if marker == "":
            old.append("")
            new.append("")
        elif marker == " ":
            old.append(line[1:])
            new.append(line[1:])
        elif marker == "+":
            new.append(line[1:])
        elif marker == "-":
            old.append(line[1:])
        else:
            if cursor == body_start:
                raise PatchParseError(
                    f"Unexpected line found in update hunk: '{line}'. Every line should start with "
                    "' ' (context line), '+' (added line), or '-' (removed line)",
                    line_number + 1,
                )
            break
        cursor += 1
    return UpdateChunk(context, tuple(old), tuple(new), is_eof), cursor - index
