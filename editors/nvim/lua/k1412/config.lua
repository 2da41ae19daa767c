--- Settings (from `vim.g.k1412`) and the `vim.lsp.config` table built from them.
local C = require('k1412.constants')

local M = {}

--- The user's settings with defaults filled in.
--- `vim.g.k1412 = { model = 'sol', configPath = '~/k.toml', user = 'alice', confirmEdits = false, cmd = {...} }`
--- @return { model: string?, configPath: string?, user: string?, confirmEdits: boolean, cmd: string[] }
function M.settings()
  local g = vim.g.k1412
  if type(g) ~= 'table' then
    g = {}
  end
  local function text(key)
    local value = g[key]
    if type(value) == 'string' and vim.trim(value) ~= '' then
      return vim.trim(value)
    end
    return nil
  end
  local cmd = g.cmd
  if type(cmd) == 'string' and vim.trim(cmd) ~= '' then
    cmd = vim.split(vim.trim(cmd), '%s+')
  elseif type(cmd) ~= 'table' or #cmd == 0 then
    cmd = vim.deepcopy(C.DEFAULT_CMD)
  end
  local config_path = text(C.SETTING_CONFIG_PATH)
  return {
    model = text(C.SETTING_MODEL),
    configPath = config_path and vim.fs.normalize(config_path) or nil,
    user = text(C.SETTING_USER),
    confirmEdits = g[C.SETTING_CONFIRM_EDITS] == true,
    cmd = cmd,
  }
end

--- The `k1412` settings section the server reads (initializationOptions and didChangeConfiguration).
--- @return table<string, string|boolean>
function M.server_settings()
  local s = M.settings()
  local out = { [C.SETTING_CONFIRM_EDITS] = s.confirmEdits }
  out[C.SETTING_MODEL] = s.model
  out[C.SETTING_CONFIG_PATH] = s.configPath
  out[C.SETTING_USER] = s.user
  return out
end

--- The config for `vim.lsp.config('k1412', …)`; `lsp/k1412.lua` returns it.
--- `filetypes` stays nil so the agent attaches to every file.
--- @return vim.lsp.Config
function M.lsp_config()
  local settings = M.server_settings()
  return {
    cmd = M.settings().cmd,
    root_markers = vim.deepcopy(C.ROOT_MARKERS),
    init_options = settings,
    settings = { [C.SETTINGS_SECTION] = settings },
    handlers = {
      [C.NOTIFY_EVENT] = function(err, event, ctx)
        return require('k1412.events').handler(err, event, ctx)
      end,
    },
    commands = {
      -- The delegate code action asks for an optional instruction first (see k1412.client).
      [C.CMD_DELEGATE] = function(command, ctx)
        require('k1412.client').delegate(command, ctx)
      end,
    },
    before_init = function(params, config)
      -- Read vim.g.k1412 at start time, not when this file was first loaded.
      local fresh = M.server_settings()
      params.initializationOptions = fresh
      config.settings = { [C.SETTINGS_SECTION] = fresh }
    end,
  }
end

return M
