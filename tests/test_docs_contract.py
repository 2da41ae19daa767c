"""The contract lives in docs/, and the docs keep up with the code.

Every list checked here is taken from the code (the event catalogue, the config
model, the tool registry, the commands the server registers, the CLI parser),
so a new event type, key, tool, command or flag without its line in docs/ fails.
Links must lead somewhere, and nothing in the repository may send a reader to
documents that only exist outside it.
"""

from __future__ import annotations

import argparse
import re
import types
import typing
from collections.abc import Iterator
from pathlib import Path

import pytest
from pydantic import BaseModel

from k1412_ls.catalog import default_registry
from k1412_ls.config import K1412Config
from k1412_ls.core.events import EVENT_TYPES, META

REPO = Path(__file__).resolve().parents[1]
DOCS = REPO / "docs"


def doc(name: str) -> str:
    return (DOCS / name).read_text(encoding="utf-8")


def has_row(text: str, key: str) -> bool:
    """Whether ``text`` has a table row whose first cell is exactly `key`."""
    return re.search(rf"^\| `{re.escape(key)}` \|", text, re.MULTILINE) is not None


def section(text: str, heading: str) -> str:
    """The text under ``heading`` (a whole heading line) up to the next heading of any level."""
    match = re.search(rf"^{re.escape(heading)}\s*$(.*?)(?=^#|\Z)", text, re.MULTILINE | re.DOTALL)
    return match.group(1) if match else ""


# --- events --------------------------------------------------------------------------------------


def test_every_event_type_has_a_row_in_the_catalogue() -> None:
    text = doc("events.md")
    missing = [kind for kind in sorted(EVENT_TYPES) if not has_row(text, kind)]
    assert not missing, f"docs/events.md has no catalogue row for: {missing}"


def test_the_current_meta_ids_are_documented() -> None:
    text = doc("events.md")
    missing = [f"{key} = {value}" for key, value in META.items()
               if re.search(rf"^\| `{re.escape(key)}` \| `{re.escape(value)}` \|", text, re.MULTILINE) is None]
    assert not missing, f"docs/events.md does not name the current meta ids: {missing}"


# --- configuration -------------------------------------------------------------------------------


def _inner_models(annotation: typing.Any) -> Iterator[tuple[type[BaseModel], str]]:
    """The models nested in a field's type, each with the path separator it adds."""
    origin = typing.get_origin(annotation)
    if isinstance(annotation, type) and issubclass(annotation, BaseModel):
        yield annotation, "."
    elif origin in (typing.Union, types.UnionType):
        for arg in typing.get_args(annotation):
            yield from _inner_models(arg)
    elif origin is dict:
        for model, _ in _inner_models(typing.get_args(annotation)[1]):
            yield model, ".<name>."
    elif origin is list:
        for model, _ in _inner_models(typing.get_args(annotation)[0]):
            yield model, "[]."


def config_keys(model: type[BaseModel], prefix: str = "") -> Iterator[str]:
    """Every key the configuration loader accepts, as a dotted path (`models.<name>.pricing.input`)."""
    for name, field in model.model_fields.items():
        if field.exclude:
            continue  # set by the loader, not by a file
        path = prefix + name
        yield path
        for inner, separator in _inner_models(field.annotation):
            yield from config_keys(inner, path + separator)


def test_config_keys_come_from_the_model() -> None:
    keys = set(config_keys(K1412Config))
    assert {"default_model", "sandbox.network", "models.<name>.pricing.off_peak.input",
            "approval.rules[].decision", "providers.<name>.api_key_env"} <= keys


def test_every_config_key_has_a_row_in_the_reference() -> None:
    text = doc("configuration.md")
    missing = [key for key in config_keys(K1412Config) if not has_row(text, key)]
    assert not missing, f"docs/configuration.md has no row for: {missing}"


def test_every_editor_setting_has_a_row_in_the_reference() -> None:
    from k1412_ls.lsp import constants as c
    from k1412_ls.lsp.settings import _FIELDS

    text = doc("configuration.md")
    missing = [key for key in _FIELDS if not has_row(text, f"{c.SETTINGS_SECTION}.{key}")]
    assert not missing, f"docs/configuration.md has no row for the settings: {missing}"


def test_every_lsp_command_the_server_registers_has_a_row() -> None:
    from k1412_ls.lsp.server import build_server

    registered = sorted(name for name in build_server().protocol.fm.commands if name.startswith("k1412."))
    assert registered, "the server registers no k1412.* command"
    text = doc("configuration.md")
    missing = [name for name in registered if not has_row(text, name)]
    assert not missing, f"docs/configuration.md has no row for the commands: {missing}"


def _subcommands() -> dict[str, argparse.ArgumentParser]:
    from k1412_ls.cli import _parser

    actions = [a for a in _parser()._actions if isinstance(a, argparse._SubParsersAction)]
    return dict(actions[0].choices)


def test_every_cli_subcommand_and_flag_is_documented() -> None:
    text = doc("configuration.md")
    problems = []
    for name, parser in _subcommands().items():
        body = section(text, f"### `k1412 {name}`")
        if not body:
            problems.append(f"no '### `k1412 {name}`' section")
            continue
        for action in parser._actions:
            for flag in action.option_strings:
                if flag.startswith("--") and flag != "--help" and f"`{flag}" not in body:
                    problems.append(f"k1412 {name} {flag}")
    assert not problems, f"docs/configuration.md misses: {problems}"


# --- tools ---------------------------------------------------------------------------------------


def test_every_tool_and_argument_is_documented() -> None:
    text = doc("tools.md")
    problems = []
    for tool in default_registry():
        body = section(text, f"### `{tool.name}`")
        if not body:
            problems.append(f"no '### `{tool.name}`' section")
            continue
        for argument in tool.schema()["function"]["parameters"].get("properties", {}):
            if not has_row(body, argument):
                problems.append(f"{tool.name}.{argument}")
    assert not problems, f"docs/tools.md misses: {problems}"


# --- links ---------------------------------------------------------------------------------------

LINK = re.compile(r"\[[^\]\n]*\]\(([^)\s]+)(?:\s+\"[^\"]*\")?\)|^\[[^\]\n]+\]:\s*(\S+)", re.MULTILINE)
FENCE = re.compile(r"^```.*?^```", re.MULTILINE | re.DOTALL)


def anchors(path: Path) -> set[str]:
    """GitHub's heading anchors of a Markdown file (duplicates get -1, -2 …)."""
    seen: dict[str, int] = {}
    found: set[str] = set()
    for line in FENCE.sub("", path.read_text(encoding="utf-8")).splitlines():
        match = re.match(r"#{1,6}\s+(.*?)\s*#*\s*$", line)
        if not match:
            continue
        slug = re.sub(r"[^\w\- ]", "", match.group(1).lower()).replace(" ", "-")
        count = seen.get(slug, 0)
        seen[slug] = count + 1
        found.add(slug if count == 0 else f"{slug}-{count}")
    return found


MARKDOWN = sorted([REPO / "README.md", *DOCS.glob("*.md")])


@pytest.mark.parametrize("page", MARKDOWN, ids=lambda p: str(p.relative_to(REPO)))
def test_relative_links_lead_to_files_that_exist(page: Path) -> None:
    broken = []
    for match in LINK.finditer(FENCE.sub("", page.read_text(encoding="utf-8"))):
        target = match.group(1) or match.group(2)
        if re.match(r"[a-zA-Z][a-zA-Z0-9+.-]*:", target) or target.startswith("#"):
            continue  # a URL, or an anchor on the same page
        file_part, _, anchor = target.partition("#")
        path = (page.parent / file_part).resolve()
        if not path.exists():
            broken.append(target)
        elif anchor and path.suffix == ".md" and anchor not in anchors(path):
            broken.append(f"{target} (no such heading)")
    assert not broken, f"{page.relative_to(REPO)} links to what does not exist: {broken}"


MODULE_PATH = re.compile(r"\bk1412_ls/[\w/.-]*\w/?")


@pytest.mark.parametrize("page", MARKDOWN, ids=lambda p: str(p.relative_to(REPO)))
def test_module_paths_named_in_the_docs_exist(page: Path) -> None:
    # Modules get renamed; a page that names one by its old path sends readers nowhere.
    missing = sorted({m.group(0) for m in MODULE_PATH.finditer(page.read_text(encoding="utf-8"))
                      if not (REPO / m.group(0)).exists()})
    assert not missing, f"{page.relative_to(REPO)} names paths that do not exist: {missing}"


# --- no references outside the repository --------------------------------------------------------

# Written as regular expressions so that this file does not match itself. The public conformance
# fixtures beside the repository (../shared/conformance) are read by tests on purpose and allowed.
OUTSIDE = re.compile(r"SPEC\.md|SPEC\s*§|DESIGN\.md|notes/security\.md|notes/pygls-2\.md|\.\./shared(?!/(?:conformance|trajectories))",
                     re.IGNORECASE)
SCANNED = ("k1412_ls", "tests", "scripts", "editors", "docs")
SKIPPED_DIRS = frozenset({"node_modules", "out", "dist", "build", "__pycache__", ".vscode-test"})
SKIPPED_SUFFIXES = frozenset({".vsix", ".png", ".jpg", ".gif", ".pyc", ".sqlite3", ".gz", ".zip"})


def scanned_files() -> Iterator[Path]:
    yield REPO / "README.md"
    for top in SCANNED:
        for path in sorted((REPO / top).rglob("*")):
            rel_parts = path.relative_to(REPO).parts
            if any(part in SKIPPED_DIRS for part in rel_parts) or path.suffix in SKIPPED_SUFFIXES:
                continue
            if path.is_file() and not path.is_symlink():
                yield path


def test_nothing_refers_to_documents_outside_the_repository() -> None:
    found = []
    for path in scanned_files():
        data = path.read_bytes()
        if b"\x00" in data[:8192]:
            continue  # binary
        for number, line in enumerate(data.decode("utf-8", "replace").splitlines(), start=1):
            match = OUTSIDE.search(line)
            if match:
                found.append(f"{path.relative_to(REPO)}:{number}: {match.group(0)}")
    assert not found, "references to documents outside the repository (point to docs/ instead):\n" + "\n".join(found)


def test_the_outside_reference_check_catches_what_it_should() -> None:
    # Positive control: the pattern finds each kind of reference and spares the conformance fixtures.
    samples = ["see " + "SPEC" + ".md", "SPEC" + " §7", "DESIGN" + ".md", "notes/" + "security.md",
               "notes/" + "pygls-2.md", ".." + "/shared/" + "SPEC" + ".md", "check out " + ".." + "/shared"]
    assert all(OUTSIDE.search(sample) for sample in samples)
    assert not OUTSIDE.search(".." + "/shared/conformance/codex-apply-patch")


@pytest.mark.parametrize("page", sorted(DOCS.glob("*.md")), ids=lambda p: p.name)
def test_every_page_starts_with_a_short_summary(page: Path) -> None:
    """A reader sees what a page covers before its details: a title, then a summary of at most 3 lines."""
    lines = page.read_text(encoding="utf-8").splitlines()
    assert lines and lines[0].startswith("# "), f"{page.name} does not start with a title"
    body = lines[1:]
    while body and not body[0].strip():
        body = body[1:]
    summary = []
    for line in body:
        if not line.strip():
            break
        summary.append(line)
    assert 1 <= len(summary) <= 3, f"{page.name}: its first paragraph has {len(summary)} lines, not a 1-3 line summary"
