--- Settings (from `vim.g.k1412`) and the `vim.lsp.config` table built from them.
local C = require('k1412.constants')

local M = {}

--- The user's settings with defaults filled in.
--- `vim.g.k1412 = { model = 'sol', configPath = '~/k.toml', user = 'alice', confirmEdits = false, cmd = {...} }`
--- (`warmUpAtStart = true`: the server loads its run machinery once idle, not when a task prompt opens.)
--- @return { model: string?, configPath: string?, user: string?, confirmEdits: boolean, warmUpAtStart: boolean, cmd: string[] }
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
    warmUpAtStart = g[C.SETTING_WARM_UP_AT_START] == true,
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
  if s.warmUpAtStart then -- sent only when on: the plugin sends k1412.prepare when a prompt opens
    out[C.SETTING_WARM_UP_AT_START] = true
  end
  return out
end

--- The user's explicit server settings from a `vim.lsp.config('k1412', { init_options = …, settings = … })`
--- table: `settings.k1412` first, then `init_options` (flat, or nested under `k1412`) over it.
--- @param init_options table?
--- @param settings table?
--- @return table<string, any>
function M.explicit(init_options, settings)
  local out = {}
  local section = type(settings) == 'table' and settings[C.SETTINGS_SECTION] or nil
  if type(section) == 'table' then
    out = vim.tbl_extend('force', out, section)
  end
  if type(init_options) == 'table' then
    local flat = vim.deepcopy(init_options)
    local nested = flat[C.SETTINGS_SECTION]
    flat[C.SETTINGS_SECTION] = nil
    out = vim.tbl_extend('force', out, flat)
    if type(nested) == 'table' then
      out = vim.tbl_extend('force', out, nested)
    end
  end
  return out
end

--- The settings a server gets: `vim.g.k1412` with the user's explicit `vim.lsp.config` values over it.
--- @param explicit table<string, any>?
--- @return table<string, any>
function M.effective(explicit)
  local merged = vim.tbl_extend('force', M.server_settings(), explicit or {})
  local path = merged[C.SETTING_CONFIG_PATH]
  if type(path) == 'string' and vim.trim(path) ~= '' then
    merged[C.SETTING_CONFIG_PATH] = vim.fs.normalize(vim.trim(path))
  end
  return merged
end

--- The explicit values of the resolved `vim.lsp.config('k1412')` (what :checkhealth shows).
--- @return table<string, any>
function M.configured_explicit()
  local ok, resolved = pcall(function()
    return vim.lsp.config[C.CLIENT_NAME]
  end)
  if not ok or type(resolved) ~= 'table' then
    return {}
  end
  return M.explicit(resolved.init_options, resolved.settings)
end

--- The config for `vim.lsp.config('k1412', …)`; `lsp/k1412.lua` returns it.
--- `filetypes` stays nil so the agent attaches to every file. `init_options` stays nil and `settings`
--- empty: whatever a user puts there with `vim.lsp.config` is theirs, and wins over `vim.g.k1412`.
--- @return vim.lsp.Config
function M.lsp_config()
  return {
    cmd = M.settings().cmd,
    -- The server starts in the project root: PYTHONSAFEPATH=1 keeps a `python -m k1412_ls lsp` there from
    -- importing modules a command planted in the project (they would run outside the sandbox, key and all).
    cmd_env = { PYTHONSAFEPATH = '1' },
    root_markers = vim.deepcopy(C.ROOT_MARKERS),
    settings = {},
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
      -- vim.g.k1412 is read at start time, not when this file was first loaded; the user's explicit
      -- vim.lsp.config values win over it. The config is this client's own copy (vim.lsp deep-copies it).
      local explicit = M.explicit(config.init_options, config.settings)
      config[M.EXPLICIT_KEY] = explicit
      local fresh = M.effective(explicit)
      params.initializationOptions = fresh
      -- client.settings is this same table (when it is non-nil): update it in place so
      -- didChangeConfiguration and workspace/configuration answer with the merged values.
      config.settings = config.settings or {}
      config.settings[C.SETTINGS_SECTION] = fresh
    end,
  }
end

--- Where before_init keeps the user's explicit values on the client's config (setup() reuses them).
M.EXPLICIT_KEY = '_k1412_explicit'

return M
