"""Malformed frames: the server skips them (and says so in its log), then answers everything after.

One bad ``Content-Length`` used to deafen the server for the rest of the session. Here every shape
of broken frame is followed by well-formed requests, which must all be answered; a request that
can be recovered from a broken frame gets one error reply, and no id is ever answered twice.
"""

from __future__ import annotations

import json
import random
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.conftest import write_config
from tests.support.raw_lsp import RawServer, frame, request, unreachable_model_server


def _shapes(suffix: str = "") -> dict[str, bytes]:
    """Every broken-frame shape; the requests inside them carry ids ending in ``suffix``."""
    shapes: dict[str, bytes] = {}

    def body(tag: str) -> bytes:  # a request inside a broken frame, with its own id
        return json.dumps(request(f"lost-{tag}")).encode()

    def add(name: str, build: object) -> None:
        tag = name.replace(" ", "-") + suffix
        shapes[name] = build(body(tag), tag)  # type: ignore[operator]

    add("non-numeric length", lambda b, t: b"Content-Length: abc\r\n\r\n" + b)
    add("negative length", lambda b, t: b"Content-Length: -5\r\n\r\n" + b)
    add("empty length", lambda b, t: b"Content-Length: \r\n\r\n" + b)
    add("plus sign", lambda b, t: b"Content-Length: +%d\r\n\r\n%s" % (len(b), b))
    add("fractional length", lambda b, t: b"Content-Length: 1.5e2\r\n\r\n" + b)
    add("length too short", lambda b, t: b"Content-Length: 10\r\n\r\n" + b)
    add("length too long", lambda b, t: b"Content-Length: %d\r\n\r\n%s" % (len(b) + 40, b))
    add("length longer than everything sent", lambda b, t: b"Content-Length: 100000\r\n\r\n" + b)
    add("zero length", lambda b, t: b"Content-Length: 0\r\n\r\n" + b)
    add("header without body", lambda b, t: b"Content-Length: 60\r\n\r\n")
    add("header without blank line", lambda b, t: b"Content-Length: %d\r\n%s" % (len(b), b))
    add("body without header", lambda b, t: b)
    add("two bodies for one header",
        lambda b, t: frame(request(f"first-{t}")) + b)
    add("duplicate lengths", lambda b, t: b"Content-Length: 5\r\nContent-Length: %d\r\n\r\n%s" % (len(b), b))
    add("binary junk", lambda b, t: bytes(range(256)) * 3)
    add("invalid utf-8 body", lambda b, t: b"Content-Length: 4\r\n\r\n\xff\xfe\xfd\xfc")
    add("junk line longer than a header", lambda b, t: b"x" * 200_000)
    add("junk with newlines", lambda b, t: b"hello\r\n\r\nworld\n\n\r\n")
    add("header split mid-word", lambda b, t: b"Content-Len" + b"gth: %d\r\n\r\n%s" % (len(b), b))
    add("absurd digit count", lambda b, t: b"Content-Length: " + b"9" * 30 + b"\r\n\r\n" + b)
    add("unknown header only", lambda b, t: b"X-Whatever: 1\r\n\r\n" + b)
    add("lower-case header and LF only", lambda b, t: b"content-length: %d\n\n%s" % (len(b), b))
    add("a good frame sent byte by byte", lambda b, t: frame(b))
    return shapes


SHAPES = _shapes()


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[RawServer]:
    with unreachable_model_server(tmp_path_factory.mktemp("framing")) as raw:
        yield raw


@pytest.mark.parametrize("shape", list(SHAPES))
def test_every_malformed_shape_is_followed_by_answered_requests(server: RawServer, shape: str) -> None:
    tag = shape.replace(" ", "-")
    pieces = len(SHAPES[shape]) if shape.endswith("byte by byte") else 1
    server.send(SHAPES[shape], pieces=pieces)
    ids = [f"{tag}-{n}" for n in range(3)]
    server.send(frame(request(ids[0])) + frame(request(ids[1], "k1412/unknownMethod")))
    server.send(frame(request(ids[2])))
    server.wait_for(*ids)
    assert all(len(server.answers(i)) == 1 for i in ids)
    assert server.answers(ids[0])[0]["result"], "listModels answered with the configured models"
    assert "error" in server.answers(ids[1])[0]


def test_no_id_is_ever_answered_twice(server: RawServer) -> None:
    server.send(frame(request("sync")))
    server.wait_for("sync")
    counts = server.counts()
    assert all(count == 1 for key, count in counts.items() if key != "null"), counts


def test_the_log_says_what_was_skipped(server: RawServer) -> None:
    body = json.dumps(request("lost-log")).encode()
    before = server.log()
    server.send(b"Content-Length: abc\r\n\r\n" + body + frame(request("log-check")))
    server.wait_for("log-check")
    deadline = time.monotonic() + 10  # stderr is read on another thread
    while "framed wrongly" not in server.log()[len(before):] and time.monotonic() < deadline:
        time.sleep(0.02)
    log = server.log()[len(before):]
    assert "skipped a frame whose Content-Length is not a byte count" in log
    assert "framed wrongly" in log and "lost-log" not in log  # sizes and reasons, never the bytes
    assert "Traceback" not in log


# --- JSON that is not one request: every request id still gets exactly one reply ---------------

def _did_open(msg_id: str | None) -> dict:
    message = {"jsonrpc": "2.0", "method": "textDocument/didOpen", "params": {"textDocument": {
        "uri": "file:///tmp/x.py", "languageId": "python", "version": 1, "text": "x = 1\n"}}}
    if msg_id is not None:
        message["id"] = msg_id
    return message


def test_a_notification_method_sent_with_an_id_gets_an_error_reply(server: RawServer) -> None:
    server.send(frame(_did_open("as-request")) + frame({"jsonrpc": "2.0", "id": "exit-req", "method": "initialized",
                                                       "params": {}}))
    server.wait_for("as-request", "exit-req")
    for msg_id in ("as-request", "exit-req"):
        (reply,) = server.answers(msg_id)
        assert reply["error"]["code"] == -32600 and "notification" in reply["error"]["message"]


def test_every_request_of_a_batch_gets_one_error_reply(server: RawServer) -> None:
    batch = [request("batch-1"), _did_open(None), request("batch-2", "shutdown")]
    server.send(frame(batch) + frame(request("after-batch")))
    server.wait_for("batch-1", "batch-2", "after-batch")
    for msg_id in ("batch-1", "batch-2"):
        (reply,) = server.answers(msg_id)
        assert reply["error"]["code"] == -32600 and "batch" in reply["error"]["message"]
    assert server.answers("after-batch")[0]["result"]  # the batch's shutdown was not run


@pytest.mark.parametrize("body", [b"[]", b"42", b'"text"', b"null", b"true"], ids=str)
def test_json_that_is_no_message_gets_an_invalid_request_reply(server: RawServer, body: bytes) -> None:
    before = len(server.answers(None))
    server.send(frame(body) + frame(request(f"after-{body.decode()}")))
    server.wait_for(f"after-{body.decode()}")
    replies = server.answers(None)
    assert len(replies) == before + 1 and replies[-1]["error"]["code"] == -32600


def test_json_nested_100000_deep_gets_an_error_reply(server: RawServer) -> None:
    before = len(server.answers(None))
    server.send(frame(b"[" * 100_000 + b"]" * 100_000) + frame(request("after-deep")))
    server.wait_for("after-deep")
    assert len(server.answers(None)) == before + 1


def test_a_request_with_100000_deep_params_gets_an_error_for_its_id(server: RawServer) -> None:
    body = b'{"jsonrpc": "2.0", "id": "deep", "method": "workspace/executeCommand", "params": ' + \
        b"[" * 100_000 + b"]" * 100_000 + b"}"
    server.send(frame(body) + frame(request("after-deep-params")))
    server.wait_for("deep", "after-deep-params")
    (reply,) = server.answers("deep")
    assert reply["error"]["code"] in (-32600, -32602)


def test_a_deep_id_trap_does_not_fool_the_id_search(server: RawServer) -> None:
    # "id" keys nested below the top level are not the request's id.
    body = b'{"jsonrpc": "2.0", "params": [{"id": "inner"}, ' + b"[" * 50_000 + b"]" * 50_000 + \
        b'], "method": "workspace/executeCommand", "id": "outer"}'
    server.send(frame(body) + frame(request("after-trap")))
    server.wait_for("outer", "after-trap")
    assert server.answers("inner") == []


@pytest.mark.stress
def test_a_thousand_random_faults_never_cost_a_well_formed_request(tmp_path: Path) -> None:
    (tmp_path / "ws").mkdir()
    config = write_config(tmp_path / "k1412.toml", "http://127.0.0.1:9/v1")
    raw = RawServer(tmp_path / "ws", env={"K1412_CONFIG": str(config)})
    rng = random.Random(1412)
    names = list(SHAPES)
    expected: list[str] = []
    try:
        for n in range(1000):
            chunk = _shapes(f"-{n}")[rng.choice(names)] + frame(request(f"r{n}"))
            raw.send(chunk, pieces=rng.choice([1, 1, 1, 3, 17]))
            expected.append(f"r{n}")
            if n % 100 == 99:
                raw.wait_for(*expected[-100:], timeout=60)
        raw.wait_for(*expected, timeout=60)
        counts = raw.counts()
        assert all(counts[json.dumps(i)] == 1 for i in expected)
        assert [key for key, count in counts.items() if key != "null" and count != 1] == []
    finally:
        raw.close()



def test_a_pretty_printed_body_quoting_a_header_is_still_one_message(server: RawServer) -> None:
    # Raw newlines are legal JSON whitespace; a string holding "Content-Length: 5" before one is no frame.
    body = json.dumps({**request("pretty"), "params": {"command": "k1412.listModels",
                                                       "arguments": ["Content-Length: 5", "x\r\n"]}},
                      indent=2).encode()
    assert b"Content-Length: 5\",\n" in body
    server.send(frame(body))
    server.wait_for("pretty")
    assert "result" in server.answers("pretty")[0] or "error" in server.answers("pretty")[0]
    assert "framed wrongly" not in server.answers("pretty")[0].get("error", {}).get("message", "")


@pytest.mark.parametrize("cut", [3, 9, 17, 21])
def test_a_too_long_frame_whose_successor_arrives_in_pieces(server: RawServer, cut: int) -> None:
    # The declared length ends inside the next frame's header, which arrives split at ``cut``.
    body = json.dumps(request(f"long-{cut}")).encode()
    nxt = frame(request(f"next-{cut}"))
    server.send(b"Content-Length: %d\r\n\r\n%s" % (len(body) + 12, body) + nxt[:cut])
    time.sleep(0.2)
    server.send(nxt[cut:])
    server.wait_for(f"long-{cut}", f"next-{cut}")
    assert "result" in server.answers(f"next-{cut}")[0]
    assert server.answers(f"long-{cut}")[0]["error"]["code"] == -32600


def test_a_content_type_before_the_length_is_a_good_frame_and_logs_nothing(server: RawServer) -> None:
    body = json.dumps(request("typed-first")).encode()
    before = server.log()
    server.send(b"Content-Type: application/vscode-jsonrpc; charset=utf-8\r\nContent-Length: %d\r\n\r\n%s"
                % (len(body), body))
    server.wait_for("typed-first")
    assert "result" in server.answers("typed-first")[0]
    time.sleep(0.2)
    assert "skipped" not in server.log()[len(before):]
