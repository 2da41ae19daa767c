"""The real server's log while a busy folder churns: only configuration changes are watched.

The configuration sits in a "home" folder that also holds busy project files, as a user's
``~/k1412.toml`` beside everything else would. File churn there and in the workspace must not
reach the server log; a change to the configuration file must still reload it; a model call
must not log a line per HTTP request.
"""

from __future__ import annotations

import asyncio
import time
from pathlib import Path

import pytest

from k1412_ls.lsp.watcher import WorkspaceWatcher, watch_plan
from tests.conftest import write_config
from tests.support.raw_lsp import RawServer, frame, request
from tests.support.scripted_server import ScriptedServer


def _churn(*folders: Path, files: int = 60) -> None:
    for folder in folders:
        busy = folder / "build" / "deep"
        busy.mkdir(parents=True, exist_ok=True)
        for index in range(files):
            (busy / f"out{index}.o").write_bytes(b"x" * index)
            (folder / f"notes{index % 5}.txt").write_text(f"edit {index}\n", encoding="utf-8")


def _reloads(raw: RawServer) -> int:
    with raw._lock:
        return sum(1 for r in raw.replies if r.get("method") == "window/logMessage"
                   and "reloaded its configuration" in r["params"]["message"])


def _rewrite_until_reloaded(raw: RawServer, config: Path, base_url: str, seen: int) -> None:
    """Rewrite the config until the server logs one more reload (the watcher arms after 'initialized')."""
    for attempt in range(40):
        write_config(config, base_url, model="test", extra=f"# rewrite {seen} {attempt}\n")
        deadline = time.monotonic() + 1.0
        while time.monotonic() < deadline:
            if _reloads(raw) > seen:
                return
            time.sleep(0.02)
    raise AssertionError(f"the configuration was never reloaded; log: {raw.log()[-2000:]}")


@pytest.mark.e2e
def test_busy_folders_leave_the_log_quiet_and_config_edits_still_reload(tmp_path: Path) -> None:
    home = tmp_path / "home"
    ws = tmp_path / "ws"
    home.mkdir()
    ws.mkdir()
    script = [{"content": "Hello.", "repeat": True}]
    with ScriptedServer(script) as model:
        config = write_config(home / "k1412.toml", model.base_url, model="test")
        raw = RawServer(ws, env={"K1412_CONFIG": str(config), "XDG_CONFIG_HOME": str(tmp_path / "xdg"),
                                 "K1412_HOME": str(tmp_path / "state")})
        try:
            # The watcher starts with the first configuration load: here the task prompt opening.
            raw.send(frame(request("prepare", params={"command": "k1412.prepare", "arguments": []})))
            raw.wait_for("prepare")
            _rewrite_until_reloaded(raw, config, model.base_url, 0)
            _churn(home, ws)
            # Events arrive in order: once this edit's reload is logged, the churn before it was seen too.
            _rewrite_until_reloaded(raw, config, model.base_url, _reloads(raw))
            raw.send(frame(request("run", params={"command": "k1412.runTask", "arguments": [{"task": "Say hello."}]})))
            raw.wait_for("run", timeout=60)
            (answer,) = raw.answers("run")
            assert answer.get("result", {}).get("status") in {"completed", "unverified"}, answer
        finally:
            raw.close()
    log = raw.log()
    assert "change" not in log, log  # watchfiles' "N changes detected" lines
    assert "HTTP Request" not in log, log  # httpx's line per model call
    assert len(model.requests) >= 1


def test_the_plan_watches_config_directories_one_level_deep(tmp_path: Path) -> None:
    ws = tmp_path / "ws"
    ws.mkdir()
    user = tmp_path / "xdg" / "k1412" / "config.toml"
    files, dirs, awaited = watch_plan([ws / ".k1412" / "config.toml", user])
    # Neither .k1412 nor xdg/k1412 exists: watch the nearest existing folder for them, nothing deeper.
    assert dirs == {ws, tmp_path}
    assert awaited == {ws / ".k1412", tmp_path / "xdg", tmp_path / "xdg" / "k1412"}
    assert ws / ".k1412" / "config.toml" in files


async def test_a_config_directory_made_before_the_watch_is_armed_is_still_followed(tmp_path: Path) -> None:
    config = tmp_path / ".k1412" / "config.toml"
    reloads: list[int] = []
    watcher = WorkspaceWatcher(lambda: reloads.append(1))
    watcher.start([config])
    config.parent.mkdir()  # before awatch has armed its watch: the creation event never arrives
    await asyncio.sleep(2.5)
    config.write_text('default_model = "sol"\n')
    for _ in range(40):
        if reloads:
            break
        await asyncio.sleep(0.1)
    watcher.stop()
    assert reloads, "the watcher kept waiting for a directory that already existed"

