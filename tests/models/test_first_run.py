"""README's first command on a machine with no model configured: one screen saying what to do."""

from __future__ import annotations

import socket
from pathlib import Path

import pytest

from k1412_ls.cli import main
from k1412_ls.config import build_config
from k1412_ls.models.first_run import _listening, setup_screen

TASK = "Create hello.py that prints hello world and run it"


@pytest.fixture
def fresh_machine(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    for name in ("K1412_CONFIG", "DEEPSEEK_API_KEY", "OPENAI_API_KEY"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "config"))
    monkeypatch.setenv("K1412_HOME", str(tmp_path / "home"))
    if _listening("http://127.0.0.1:8080/v1"):
        pytest.skip("something listens on 127.0.0.1:8080 on this machine: not a fresh machine")
    ws = tmp_path / "ws"
    ws.mkdir()
    return ws


def test_first_run_without_a_model_prints_what_to_do(fresh_machine: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code = main(["run", "--workspace", str(fresh_machine), TASK])
    screen = capsys.readouterr().err
    assert code == 2
    assert "DEEPSEEK_API_KEY" in screen and "llama-server" in screen and "managed = true" in screen
    assert "Nothing was run" in screen and "Could not connect" not in screen
    assert len(screen.splitlines()) <= 30  # one screen
    assert not (fresh_machine / "hello.py").exists()


def test_a_set_key_is_pointed_out(fresh_machine: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("DEEPSEEK_API_KEY", "sk-test")
    config = build_config({})
    screen = setup_screen(config, config.model_spec(), has_config_file=False)
    assert screen is not None and "DEEPSEEK_API_KEY is set" in screen


def test_no_screen_once_a_server_listens_or_a_file_exists(fresh_machine: Path) -> None:
    config = build_config({})
    assert setup_screen(config, config.model_spec(), has_config_file=True) is None
    with socket.socket() as listener:
        listener.bind(("127.0.0.1", 0))
        listener.listen()
        port = listener.getsockname()[1]
        moved = build_config({"providers": {"local": {"base_url": f"http://127.0.0.1:{port}/v1"}}})
        # a base_url the user changed is their configuration: never the first-run screen
        assert setup_screen(moved, moved.model_spec(), has_config_file=False) is None
        assert _listening(f"http://127.0.0.1:{port}/v1")
