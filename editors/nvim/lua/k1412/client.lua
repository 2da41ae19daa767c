--- Talking to the attached K1412 server: run a task, cancel a run, the delegate code action.
local C = require('k1412.constants')
local config = require('k1412.config')
local events = require('k1412.events')
local render = require('k1412.render')

local M = {}

--- Requests still waiting for their result: request id -> { client_id, run_id? }.
--- @type table<integer, { client_id: integer, run_id: string? }>
local pending = {}

-- A request learns its run id from the first new root run the server announces after it was sent,
-- so :K1412Cancel can name the run before the request returns.
events.subscribe(function(run)
  if run.status ~= 'running' then
    return
  end
  for _, entry in pairs(pending) do
    if entry.run_id == run.run_id then
      return
    end
  end
  local first
  for id, entry in pairs(pending) do
    if entry.run_id == nil and (first == nil or id < first) then
      first = id
    end
  end
  if first then
    pending[first].run_id = run.run_id
  end
end)

--- The K1412 client attached to `bufnr` (or any K1412 client), or nil with a message saying what to do.
--- @param bufnr integer?
--- @return vim.lsp.Client?
function M.get(bufnr)
  local clients = vim.lsp.get_clients({ name = C.CLIENT_NAME, bufnr = bufnr or 0 })
  if #clients == 0 then
    clients = vim.lsp.get_clients({ name = C.CLIENT_NAME })
  end
  if #clients == 0 then
    vim.notify("No K1412 server is running; call vim.lsp.enable('k1412') and open a file in a project "
      .. '(a directory with .git or .k1412), or see :checkhealth k1412.', vim.log.levels.ERROR)
    return nil
  end
  return clients[1]
end

--- The file's text with one line ending and no BOM, or nil when it cannot be read.
--- @param path string
--- @return string?
local function disk_text(path)
  local fh = io.open(path, 'rb')
  if not fh then
    return nil
  end
  local data = fh:read('*a')
  fh:close()
  return (data:gsub('^\239\187\191', ''):gsub('\r\n', '\n'))
end

--- Keep the modified flag truthful: the server writes each edit to disk right after the buffer got it
--- (with any unsaved typing in that buffer). A buffer the run changed whose text is exactly the file on
--- disk is written again (same text, no autocmds, so no formatter runs) and so marked unmodified; a
--- buffer that differs (typed in after the agent's last write) stays modified.
--- @param result table
--- @param root string?
function M.settle_buffers(result, root)
  if not root or type(result.files_changed) ~= 'table' then
    return
  end
  for _, rel in ipairs(result.files_changed) do
    local path = vim.fs.normalize(root .. '/' .. rel)
    local buf = vim.fn.bufnr(path)
    if buf > 0 and vim.api.nvim_buf_is_loaded(buf) and vim.bo[buf].modified then
      local lines = vim.api.nvim_buf_get_lines(buf, 0, -1, false)
      local text = table.concat(lines, '\n') .. ((vim.bo[buf].eol or vim.bo[buf].fixeol) and '\n' or '')
      if disk_text(path) == text then
        vim.api.nvim_buf_call(buf, function()
          vim.cmd('silent noautocmd keepalt write!')
        end)
      end
    end
  end
end

--- Tell the server a task prompt is open (k1412.prepare): it loads the run machinery while the user
--- types, so the first run starts as fast as later ones. Never waits and never bothers the user: with no
--- server, or one that cannot prepare (an older server), the first run loads the machinery itself.
--- @param client vim.lsp.Client?
--- @param bufnr integer?
--- @return boolean sent
function M.prepare(client, bufnr)
  if client == nil then
    client = vim.lsp.get_clients({ name = C.CLIENT_NAME, bufnr = bufnr or 0 })[1]
      or vim.lsp.get_clients({ name = C.CLIENT_NAME })[1]
  end
  if client == nil then
    return false
  end
  local ok = client:request('workspace/executeCommand', { command = C.CMD_PREPARE, arguments = { vim.empty_dict() } },
    function(err)
      if err then
        vim.lsp.log.warn('k1412: the server could not prepare for a run (the run loads it instead):', err.message)
      end
    end, bufnr)
  return ok == true
end

--- Show how a run ended and tell `User K1412RunDone` listeners (the result is the autocmd's data).
local function on_result(request_id, root)
  return function(err, result)
    pending[request_id] = nil
    if err then
      if err.code == -32800 then
        vim.notify('K1412 run cancelled before it started.', vim.log.levels.INFO)
      else
        vim.notify('K1412 could not run the task: ' .. tostring(err.message), vim.log.levels.ERROR)
      end
      vim.api.nvim_exec_autocmds('User', { pattern = 'K1412RunDone', data = { error = err.message or '' } })
      return
    end
    if type(result) ~= 'table' then
      vim.notify('K1412 returned no result; see :K1412Log and the LSP log (:LspLog).', vim.log.levels.ERROR)
      return
    end
    events.finish(result)
    pcall(M.settle_buffers, result, root)
    local text, level = render.verdict(result)
    vim.notify(text, level)
    vim.api.nvim_exec_autocmds('User', { pattern = 'K1412RunDone', data = result })
  end
end

--- Send a run-starting command; its result is shown when the run ends.
--- @param client vim.lsp.Client
--- @param command string
--- @param args table
--- @param bufnr integer?
--- @return integer? request_id
local function start(client, command, args, bufnr)
  local request_id
  local ok, id = client:request('workspace/executeCommand', { command = command, arguments = { args } },
    function(err, result)
      on_result(request_id, client.root_dir)(err, result)
    end, bufnr)
  if not ok then
    vim.notify('The K1412 server has stopped; see :LspLog, then run :edit to restart it.', vim.log.levels.ERROR)
    return nil
  end
  request_id = id
  pending[id] = { client_id = client.id }
  return id
end

--- Run `task` through k1412.runTask on the attached server.
--- @param task string
--- @param bufnr integer?
--- @return integer? request_id
function M.run_task(task, bufnr)
  task = vim.trim(task or '')
  if task == '' then
    vim.notify('Type a task for K1412 to run, for example :K1412Run Add a test for parse_date', vim.log.levels.WARN)
    return nil
  end
  local client = M.get(bufnr)
  if not client then
    return nil
  end
  local args = { task = task }
  -- The client's merged settings: vim.g.k1412 under the user's explicit vim.lsp.config values.
  local section = type(client.settings) == 'table' and client.settings[C.SETTINGS_SECTION] or nil
  local model = type(section) == 'table' and section[C.SETTING_MODEL] or config.settings().model
  if type(model) == 'string' and model ~= '' then
    args.model = model
  end
  return start(client, C.CMD_RUN_TASK, args, bufnr)
end

--- Cancel a run by id; the run ends `cancelled` and its request returns the result.
--- @param run_id string
function M.cancel_run(run_id)
  local client = M.get()
  if not client then
    return
  end
  client:request('workspace/executeCommand', { command = C.CMD_CANCEL_RUN, arguments = { { run_id = run_id } } },
    function(err)
      if err then
        vim.notify(('K1412 could not cancel run %s: %s'):format(run_id, tostring(err.message)), vim.log.levels.ERROR)
      end
    end)
end

--- Undo a run through k1412.undoRun: buffers and files go back to their state before it, except paths
--- changed since (listed with the reason).
--- @param run_id string?
function M.undo(run_id)
  local client = M.get()
  if not client then
    return
  end
  local args = (run_id and run_id ~= '') and { run_id = run_id } or vim.empty_dict()
  client:request('workspace/executeCommand', { command = C.CMD_UNDO_RUN, arguments = { args } },
    function(err, result)
      if err or type(result) ~= 'table' then
        vim.notify('K1412 could not undo: ' .. tostring(err and err.message or 'no result'), vim.log.levels.ERROR)
        return
      end
      local lines = { result.message }
      for _, refused in ipairs(result.refused or {}) do
        lines[#lines + 1] = ('  refused %s: %s'):format(refused.path, refused.reason)
      end
      vim.notify(table.concat(lines, '\n'), result.ok and vim.log.levels.INFO or vim.log.levels.WARN)
      vim.api.nvim_exec_autocmds('User', { pattern = 'K1412UndoDone', data = result })
    end)
end

--- Cancel `run_id`, or the active run (asking which when several are going).
--- @param run_id string?
function M.cancel(run_id)
  if run_id and run_id ~= '' then
    return M.cancel_run(run_id)
  end
  local active = events.active()
  if #active == 1 then
    return M.cancel_run(active[1].run_id)
  elseif #active > 1 then
    vim.ui.select(active, {
      prompt = 'Cancel which K1412 run?',
      format_item = function(run)
        return render.clip(run.task or run.run_id, 60) .. ' (' .. run.run_id .. ')'
      end,
    }, function(run)
      if run then
        M.cancel_run(run.run_id)
      end
    end)
    return
  end
  -- The run has not announced itself yet: cancel the request instead.
  for id, entry in pairs(pending) do
    local client = vim.lsp.get_client_by_id(entry.client_id)
    if client then
      client:cancel_request(id)
      return
    end
  end
  vim.notify('No K1412 run is active.', vim.log.levels.INFO)
end

--- Client-side handler of the delegate code action: ask for an optional instruction (empty: a read-only
--- review of the selection) and, with one, whether the sub-agent may edit; then run it like a task.
--- @param command lsp.Command
--- @param ctx { client_id: integer, bufnr: integer }
function M.delegate(command, ctx)
  local client = vim.lsp.get_client_by_id(ctx.client_id)
  local base = command.arguments and command.arguments[1]
  if not client or type(base) ~= 'table' or not base.uri or not base.range then
    vim.notify('The delegate action lost its selection; select the code again and rerun the action.', vim.log.levels.WARN)
    return
  end
  local function send(args)
    start(client, C.CMD_DELEGATE, args, ctx.bufnr)
  end
  M.prepare(client, ctx.bufnr)
  vim.ui.input({ prompt = 'K1412 sub-agent instruction (empty: read-only review): ' }, function(input)
    if input == nil then
      return
    end
    local args = { uri = base.uri, range = base.range }
    input = vim.trim(input)
    if input == '' then
      return send(args)
    end
    args.task = input
    vim.ui.select({ 'Read only', 'Allow edits' }, { prompt = 'May the sub-agent edit files?' }, function(choice)
      if choice == nil then
        return
      end
      args.write = choice == 'Allow edits'
      send(args)
    end)
  end)
end

return M
