--- K1412 for Neovim: run tasks, cancel runs, read their event logs, show progress in the statusline.
---
--- Minimal setup (Neovim 0.11+): `vim.g.k1412 = { model = 'sol' }` and `vim.lsp.enable('k1412')`.
local M = {}

--- Update the settings (merged into `vim.g.k1412`) and tell running servers about them.
--- Values given explicitly with `vim.lsp.config('k1412', { init_options = …, settings = … })` still win;
--- a key set both ways is named in a warning.
--- @param opts { model: string?, configPath: string?, user: string?, confirmEdits: boolean?, cmd: string[]? }?
function M.setup(opts)
  local current = type(vim.g.k1412) == 'table' and vim.g.k1412 or {}
  vim.g.k1412 = vim.tbl_extend('force', current, opts or {})
  local C = require('k1412.constants')
  local config = require('k1412.config')
  local shadowed = {}
  for _, client in ipairs(vim.lsp.get_clients({ name = C.CLIENT_NAME })) do
    local explicit = client.config[config.EXPLICIT_KEY] or {}
    for key in pairs(opts or {}) do
      if explicit[key] ~= nil and not vim.tbl_contains(shadowed, key) then
        shadowed[#shadowed + 1] = key
      end
    end
    client.settings = client.settings or {}
    client.settings[C.SETTINGS_SECTION] = config.effective(explicit)
    client:notify('workspace/didChangeConfiguration', { settings = client.settings })
  end
  if #shadowed > 0 then
    table.sort(shadowed)
    vim.notify(('K1412: %s set by vim.lsp.config(\'k1412\', …), which wins over setup() and vim.g.k1412.')
      :format(table.concat(shadowed, ', ')), vim.log.levels.WARN)
  end
end

--- Run a task on the server attached to the current buffer; the verdict arrives with vim.notify.
--- @param task string
--- @return integer? request_id
function M.run(task)
  return require('k1412.client').run_task(task, vim.api.nvim_get_current_buf())
end

--- Cancel `run_id`, or the active run.
--- @param run_id string?
function M.cancel(run_id)
  require('k1412.client').cancel(run_id)
end

--- Undo `run_id` (default: the latest run in the workspace not undone yet); the outcome arrives with
--- vim.notify and the `User K1412UndoDone` autocommand.
--- @param run_id string?
function M.undo(run_id)
  require('k1412.client').undo(run_id)
end

--- Open the event log of `run_id` (default: the latest run).
--- @param run_id string?
function M.log(run_id)
  return require('k1412.log').open(run_id)
end

--- Statusline component: `set statusline+=%{v:lua.require'k1412'.statusline()}`.
--- @return string
function M.statusline()
  return require('k1412.progress').statusline()
end

return M
