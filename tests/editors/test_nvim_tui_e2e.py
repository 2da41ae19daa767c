"""Real Neovim with its real terminal UI (in tmux): a run as the user sees it, captured as a screenshot.

Neovim runs in a tmux pane (not --headless), runs ``:K1412Run`` against the real ``k1412 lsp`` and a
scripted model, then opens ``:K1412Log``. The pane is captured with its colours (``tmux capture-pane
-e``), rendered as HTML and photographed by Debian's Chromium: the image is a rendering of the real
terminal's cells, not a screen grab of a terminal emulator window. Marked ``editor_e2e``;
``K1412_E2E_SCREENSHOTS=DIR`` keeps the image.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import time
from pathlib import Path

import pytest

from tests.conftest import write_config
from tests.support.ansi_html import capture_to_html
from tests.support.scripted_server import ScriptedServer

pytestmark = pytest.mark.editor_e2e

REPO = Path(__file__).resolve().parents[2]
NVIM_DIR = REPO / "editors" / "nvim"
TASK = "Change x to 2 in app.py"

INIT = r"""
vim.opt.runtimepath:append(vim.env.K1412_E2E_NVIM_DIR)
vim.o.termguicolors = true
vim.o.laststatus = 2
vim.o.cmdheight = 2
vim.o.number = true
vim.cmd('syntax on')
vim.g.k1412 = { cmd = { vim.env.K1412_E2E_PYTHON, '-m', 'k1412_ls.cli', 'lsp' }, user = 'demo' }
vim.g.k1412_quiet_progress = true
vim.o.statusline = " %f %m%= %{v:lua.require'k1412'.statusline()} "
vim.lsp.enable('k1412')
vim.api.nvim_create_autocmd('User', { pattern = 'K1412RunDone', callback = function(args)
  vim.schedule(function()
    vim.cmd('K1412Log')
    vim.cmd('wincmd p')
    vim.defer_fn(function()
      vim.cmd('redraw!')
      local fh = io.open(vim.env.K1412_E2E_DONE, 'w')
      fh:write(vim.json.encode(args.data))
      fh:close()
    end, 300)
  end)
end })
vim.api.nvim_create_autocmd('LspAttach', { once = true, callback = function()
  vim.defer_fn(function() vim.cmd('K1412Run ' .. vim.env.K1412_E2E_TASK) end, 200)
end })
"""


def test_a_run_in_the_neovim_tui_shows_the_edit_the_verdict_and_the_log(tmp_path: Path) -> None:
    tmux, nvim, chromium = shutil.which("tmux"), shutil.which("nvim"), "/usr/bin/chromium"
    assert tmux and nvim and os.access(chromium, os.X_OK), "needs tmux, nvim and Debian chromium"
    ws = tmp_path / "ws"
    (ws / ".k1412").mkdir(parents=True)
    (ws / "app.py").write_text("x = 1\nprint(x)\n", encoding="utf-8")
    (tmp_path / "init.lua").write_text(INIT, encoding="utf-8")
    done = tmp_path / "done.json"
    script = [
        {"delay_s": 0.5, "tool_calls": [{"name": "patch_file", "arguments": {
            "path": "app.py", "edits": [{"old_text": "x = 1", "new_text": "x = 2"}]}}]},
        {"tool_calls": [{"name": "run_command", "arguments": {"command": "python3 app.py"}}]},
        {"tool_calls": [{"name": "read_file", "arguments": {"path": "app.py"}}]},
        {"content": "done: x is now 2 and app.py prints 2", "repeat": True},
    ]
    socket = f"k1412-e2e-{os.getpid()}"
    with ScriptedServer(script) as server:
        config = write_config(tmp_path / "k1412.toml", server.base_url, model="test")
        env = {**os.environ, "TERM": "xterm-256color", "K1412_CONFIG": str(config),
               "K1412_HOME": str(tmp_path / "state"), "XDG_STATE_HOME": str(tmp_path / "nvim-state"),
               "XDG_DATA_HOME": str(tmp_path / "nvim-data"), "K1412_E2E_NVIM_DIR": str(NVIM_DIR),
               "K1412_E2E_PYTHON": sys.executable, "K1412_E2E_TASK": TASK, "K1412_E2E_DONE": str(done),
               "PYTHONPATH": os.pathsep.join(filter(None, [str(REPO), os.environ.get("PYTHONPATH")]))}
        subprocess.run([tmux, "-L", socket, "-f", "/dev/null", "new-session", "-d", "-x", "110", "-y", "30",
                        "-c", str(ws), f"{nvim} -i NONE -u {tmp_path / 'init.lua'} app.py"],
                       env=env, check=True, timeout=30)
        try:
            deadline = time.monotonic() + 90
            while not done.exists() and time.monotonic() < deadline:
                time.sleep(0.2)
            time.sleep(0.5)
            capture = subprocess.run([tmux, "-L", socket, "capture-pane", "-e", "-p", "-t", "0"],
                                     capture_output=True, text=True, check=True, timeout=30).stdout
        finally:
            subprocess.run([tmux, "-L", socket, "kill-server"], capture_output=True, timeout=30)
    plain = subprocess.run(["sed", "-e", r"s/\x1b\[[0-9;:]*m//g"], input=capture, capture_output=True,
                           text=True, check=True).stdout
    assert done.exists(), f"the run never finished in the TUI; screen:\n{plain}"
    assert "x = 2" in plain, plain
    assert "K1412: completed" in plain, plain  # the statusline component
    assert "tool.completed run_command python3 app.py ok exit 0" in plain, plain  # the :K1412Log window
    page = tmp_path / "nvim.html"
    page.write_text(capture_to_html(capture, "K1412 in Neovim"), encoding="utf-8")
    shot = tmp_path / "nvim-run.png"
    subprocess.run([chromium, "--headless", "--no-sandbox", "--disable-gpu", "--hide-scrollbars",
                    f"--screenshot={shot}", "--window-size=1010,600", page.as_uri()],
                   capture_output=True, timeout=120)
    assert shot.is_file() and shot.stat().st_size > 10_000, "chromium wrote no screenshot"
    keep = os.environ.get("K1412_E2E_SCREENSHOTS")
    if keep:
        Path(keep).mkdir(parents=True, exist_ok=True)
        shutil.copy(shot, Path(keep) / "nvim-run.png")
