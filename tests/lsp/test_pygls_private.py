"""pygls offers no public API for a few things K1412 needs; k1412_ls/lsp/pygls_private.py is the one place
that reaches into it. These tests keep it that way and pin what it relies on in the installed pygls."""

from __future__ import annotations

import ast
import inspect
from pathlib import Path

import pytest
from pygls.lsp.server import LanguageServer
from pygls.protocol import JsonRPCProtocol, LanguageServerProtocol

from k1412_ls.lsp import pygls_private
from k1412_ls.lsp.protocol import K1412Protocol

PACKAGE = Path(__file__).resolve().parents[2] / "k1412_ls"
# Private members of pygls' protocol objects K1412 uses (attributes and methods it overrides).
PRIVATE = {"_send_data", "_send_response", "_request_futures", "_result_types", "_converter", "_shutdown",
           "_workspace", "_execute_handler", "_handle_response"}


def private_uses(source: str) -> list[str]:
    """``x._name`` attribute uses and ``def _name`` overrides of pygls' private members in ``source``."""
    found = []
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Attribute) and node.attr in PRIVATE:
            found.append(f"line {node.lineno}: .{node.attr}")
        elif isinstance(node, ast.FunctionDef) and node.name in PRIVATE:
            found.append(f"line {node.lineno}: def {node.name}")
    return found


def test_the_check_sees_private_use() -> None:
    """Positive control: an attribute use and an override are both reported; a public call is not."""
    source = "def _send_response(self):\n    pass\nx = protocol._request_futures\nprotocol.send_error(1, e)\n"
    assert private_uses(source) == ["line 1: def _send_response", "line 3: ._request_futures"]


def pygls_users() -> list[Path]:
    """Modules that import pygls (only they hold pygls objects), except the one allowed in."""
    users = []
    for path in sorted(PACKAGE.rglob("*.py")):
        tree = ast.parse(path.read_text(encoding="utf-8"))
        modules = {alias.name for node in ast.walk(tree) if isinstance(node, ast.Import) for alias in node.names}
        modules |= {node.module or "" for node in ast.walk(tree) if isinstance(node, ast.ImportFrom)}
        if path.name != "pygls_private.py" and any(m.split(".")[0] == "pygls" for m in modules):
            users.append(path)
    return users


def test_the_server_modules_are_checked() -> None:
    names = {p.name for p in pygls_users()}
    assert {"protocol.py", "server.py", "transport.py", "runs.py"} <= names


@pytest.mark.parametrize("path", pygls_users(), ids=lambda p: p.relative_to(PACKAGE).as_posix())
def test_no_other_module_reaches_into_pygls(path: Path) -> None:
    assert private_uses(path.read_text(encoding="utf-8")) == []


def test_pygls_still_has_what_the_module_relies_on() -> None:
    """The members exist with the signatures pygls_private calls them with (pygls 2.1.x)."""
    server = LanguageServer("pin", "0", protocol_cls=K1412Protocol)
    protocol = server.protocol
    assert isinstance(protocol._request_futures, dict) and isinstance(protocol._result_types, dict)
    assert protocol._shutdown is False and protocol._workspace is None
    assert hasattr(protocol._converter, "unstructure")
    assert list(inspect.signature(JsonRPCProtocol._send_response).parameters)[:4] == [
        "self", "msg_id", "result", "error"]
    assert list(inspect.signature(JsonRPCProtocol._execute_handler).parameters)[:5] == [
        "self", "msg_id", "handler", "callback", "args"]
    assert list(inspect.signature(JsonRPCProtocol._handle_response).parameters)[:4] == [
        "self", "msg_id", "result", "error"]
    assert callable(LanguageServerProtocol._send_data)


def test_error_replies_pass_the_filter() -> None:
    """Every error reply goes through filter_error (K1412Protocol redacts there); results do not."""
    sent: list[dict[str, object]] = []
    seen: list[object] = []

    class Recording(pygls_private.FilteredResponses):
        def filter_error(self, error: object) -> object:
            seen.append(error)
            return error

        def _send_data(self, data: object) -> None:
            sent.append(self._converter.unstructure(data))

    server = LanguageServer("pin", "0", protocol_cls=Recording)
    protocol = server.protocol
    from lsprotocol.types import ResponseError

    protocol.send_error(7, ResponseError(code=-32602, message="bad"))
    protocol._send_response(8, result={"ok": True})
    assert len(seen) == 1 and getattr(seen[0], "message", None) == "bad"
    assert [m.get("id") for m in sent] == [7, 8]
    assert sent[0]["error"] == {"code": -32602, "message": "bad"}


def test_log_lines_are_redacted_unless_they_are_our_own_literal_sentences() -> None:
    import logging

    from k1412_ls.lsp.protocol import RedactingFormatter

    secret = "sk-proj-" + "Q9w8E7r6" * 4
    formatter = RedactingFormatter("%(message)s")

    def line(name: str, msg: str, *args: object) -> str:
        return formatter.format(logging.LogRecord(name, logging.ERROR, __file__, 1, msg, args, None))

    assert secret not in line("pygls.protocol", f"failed: Unknown model {secret!r}")  # third-party text
    assert secret not in line("k1412_ls.lsp.server", "server error: %r", ValueError(secret))  # our format + args
    assert line("k1412_ls.lsp.warmup", "the run machinery loads with the first run") == \
        "the run machinery loads with the first run"
