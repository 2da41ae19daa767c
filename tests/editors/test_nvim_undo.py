"""Real Neovim: :K1412Undo puts buffers and files back after a run, and refuses a buffer typed in since."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.conftest import write_config
from tests.editors.test_nvim_e2e import APP, PRELUDE, run_nvim
from tests.support.scripted_server import ScriptedServer

pytestmark = pytest.mark.e2e

TASK = "Change x to 2 in app.py, create new.py and delete old.txt with rm"
SCRIPT = [
    {"tool_calls": [{"name": "patch_file", "arguments": {
        "path": "app.py", "edits": [{"old_text": "x = 1", "new_text": "x = 2"}]}}]},
    {"tool_calls": [{"name": "write_file", "arguments": {"path": "new.py", "content": "print('new')\n"}}]},
    {"tool_calls": [{"name": "run_command", "arguments": {"command": "rm old.txt && python3 app.py"}}]},
    {"content": "x is now 2 in app.py, new.py is created and old.txt is gone.", "repeat": True},
]

UNDO_SCRIPT = PRELUDE + r"""
local done, undone
vim.api.nvim_create_autocmd('User', { pattern = 'K1412RunDone', callback = function(args) done = args.data end })
vim.api.nvim_create_autocmd('User', { pattern = 'K1412UndoDone', callback = function(args) undone = args.data end })
if out.attached then
  vim.cmd('K1412Run ' .. vim.env.K1412_E2E_TASK)
  out.finished = vim.wait(60000, function() return done ~= nil end, 20)
  out.after_run = vim.api.nvim_buf_get_lines(buf, 0, -1, false)
  if vim.env.K1412_E2E_TYPE == '1' then
    vim.api.nvim_buf_set_lines(buf, -1, -1, false, { '# mine' })  -- the user types; the buffer is not saved
  end
  vim.cmd('K1412Undo')
  out.undone = vim.wait(30000, function() return undone ~= nil end, 20)
  out.undo = undone
end
out.buffer = vim.api.nvim_buf_get_lines(buf, 0, -1, false)
out.notes = notes
"""


@pytest.fixture
def ws(tmp_path: Path) -> Path:
    path = tmp_path / "ws"
    path.mkdir()
    (path / ".k1412").mkdir()  # a root marker, so the client starts in project mode
    (path / "app.py").write_text(APP, encoding="utf-8")
    return path


@pytest.mark.parametrize("typed", [False, True], ids=["untouched", "user-typed"])
def test_k1412undo_restores_buffer_and_disk_or_refuses_the_typed_buffer(tmp_path: Path, ws: Path,
                                                                        typed: bool) -> None:
    (ws / "old.txt").write_text("old\n", encoding="utf-8")
    with ScriptedServer(SCRIPT) as server:
        config = write_config(tmp_path / "k1412.toml", server.base_url, model="test")
        out = run_nvim(UNDO_SCRIPT, tmp_path, ws, {"K1412_CONFIG": str(config), "K1412_E2E_TASK": TASK,
                                                   "K1412_E2E_TYPE": "1" if typed else "0"})
    context = out["_context"]
    assert out["finished"] is True and out["undone"] is True, f"{out.get('notes')} {context}"
    assert out["after_run"] == ["x = 2", "print(x)"]
    undo = out["undo"]
    assert not (ws / "new.py").exists() and (ws / "old.txt").read_text(encoding="utf-8") == "old\n"
    if not typed:
        assert undo["ok"] is True and undo["restored"] == ["app.py", "new.py", "old.txt"], undo
        assert out["buffer"] == APP.splitlines()
        assert (ws / "app.py").read_text(encoding="utf-8") == APP
        assert any(n["msg"].startswith("Restored all 3 path(s)") for n in out["notes"]), out["notes"]
    else:
        assert undo["ok"] is False and undo["restored"] == ["new.py", "old.txt"], undo
        assert undo["refused"] == [{"path": "app.py", "reason": "it has unsaved changes in the editor made after the run"}]
        assert out["buffer"] == ["x = 2", "print(x)", "# mine"]
        assert (ws / "app.py").read_text(encoding="utf-8") == "x = 2\nprint(x)\n"
        assert any("refused app.py" in n["msg"] for n in out["notes"]), out["notes"]
