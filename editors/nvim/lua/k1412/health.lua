--- :checkhealth k1412 — the server binary, its version, the configured model and the running clients.
local M = {}

--- The server command with its trailing `lsp` subcommand replaced by `extra` (e.g. `--version`).
--- @param cmd string[]
--- @param extra string[]
--- @return string[]
local function sibling_command(cmd, extra)
  local out = vim.deepcopy(cmd)
  if out[#out] == 'lsp' then
    out[#out] = nil
  end
  return vim.list_extend(out, extra)
end

local function run(cmd)
  local ok, proc = pcall(vim.system, cmd, { text = true })
  if not ok then
    return nil, tostring(proc)
  end
  local done = proc:wait(10000)
  if done.code ~= 0 then
    local reason = vim.trim(done.stderr ~= '' and done.stderr or done.stdout)
    return nil, ('exit code %s%s'):format(done.code, reason ~= '' and (': ' .. reason) or '')
  end
  return vim.trim(done.stdout), nil
end

function M.check()
  local health = vim.health
  local config = require('k1412.config')
  local C = require('k1412.constants')
  -- What a server would start with: vim.g.k1412 under the user's explicit vim.lsp.config values.
  local settings = config.settings()
  local explicit = config.configured_explicit()
  local effective = config.effective(explicit)
  settings.model = effective[C.SETTING_MODEL]
  settings.configPath = effective[C.SETTING_CONFIG_PATH]
  settings.user = effective[C.SETTING_USER]
  local resolved_ok, resolved = pcall(function() return vim.lsp.config[C.CLIENT_NAME] end)
  if resolved_ok and type(resolved) == 'table' and type(resolved.cmd) == 'table' and #resolved.cmd > 0 then
    settings.cmd = resolved.cmd
  end
  local function origin(key)
    return explicit[key] ~= nil and "vim.lsp.config('k1412')" or 'vim.g.k1412'
  end

  health.start('K1412 server')
  if vim.fn.has('nvim-0.11') == 0 then
    health.error('Neovim 0.11 or newer is needed for vim.lsp.config / vim.lsp.enable.')
  end
  local exe = settings.cmd[1]
  if vim.fn.executable(exe) == 0 then
    health.error(('`%s` is not executable'):format(exe), {
      'Install the k1412-ls Python package so `k1412` is on PATH,',
      "or set vim.g.k1412 = { cmd = { '/path/to/k1412', 'lsp' } }.",
    })
  else
    health.ok(('server command: `%s` (%s)'):format(table.concat(settings.cmd, ' '), vim.fn.exepath(exe)))
    local version, err = run(sibling_command(settings.cmd, { '--version' }))
    if version then
      health.ok('version: ' .. version)
    else
      health.warn('could not read the server version: ' .. err)
    end
  end

  health.start('K1412 settings')
  if settings.configPath then
    if vim.uv.fs_stat(settings.configPath) then
      health.ok(('configPath: %s (from %s)'):format(settings.configPath, origin(C.SETTING_CONFIG_PATH)))
    else
      health.error('configPath does not exist: ' .. settings.configPath,
        { ('Fix configPath in %s or remove it.'):format(origin(C.SETTING_CONFIG_PATH)) })
    end
  else
    health.info('configPath not set: the server uses $K1412_CONFIG, <workspace>/.k1412/config.toml or its defaults')
  end
  if not settings.model then
    health.info("model not set: the configuration's default_model is used")
  end
  if settings.user then
    health.info('user: ' .. settings.user)
  end
  local catalogue_checked = false
  if vim.fn.executable(exe) == 1 then
    local models_cmd = sibling_command(settings.cmd, { 'models', '--json' })
    if settings.configPath then
      vim.list_extend(models_cmd, { '--config', settings.configPath })
    end
    local out, err = run(models_cmd)
    local ok, models = pcall(vim.json.decode, out or '')
    if not out and settings.configPath and vim.uv.fs_stat(settings.configPath) then
      -- The file exists but the server refuses it: every run would fail the same way.
      health.error('the server refuses configPath ' .. settings.configPath .. ': ' .. err,
        { 'Fix the file (the message names the key), or point configPath elsewhere.' })
    elseif not out then
      health.warn('could not list the models: ' .. err)
    elseif not ok or type(models) ~= 'table' then
      health.warn('`' .. table.concat(models_cmd, ' ') .. '` did not print a JSON list of models')
    else
      local ids = {}
      for _, model in ipairs(models) do
        ids[#ids + 1] = type(model) == 'table' and model.id or nil
      end
      health.ok('models: ' .. table.concat(ids, ', '))
      catalogue_checked = true
      if settings.model and vim.tbl_contains(ids, settings.model) then
        health.ok(('model: %s (from %s)'):format(settings.model, origin(C.SETTING_MODEL)))
      elseif settings.model then
        health.error(('configured model `%s` is not in the catalogue'):format(settings.model),
          { ('Set model in %s to one of: '):format(origin(C.SETTING_MODEL)) .. table.concat(ids, ', ') })
      end
    end
  end
  if settings.model and not catalogue_checked then
    health.info('model: ' .. settings.model .. ' (not checked against the catalogue)')
  end

  health.start('K1412 clients')
  local clients = vim.lsp.get_clients({ name = C.CLIENT_NAME })
  if #clients == 0 then
    health.info("no K1412 client is running; call vim.lsp.enable('k1412') and open a file in a project")
  end
  for _, client in ipairs(clients) do
    local root = client.root_dir or '(no root: single-file mode)'
    health.ok(('client %d attached to %d buffer(s), root %s'):format(client.id,
      vim.tbl_count(client.attached_buffers), root))
  end
end

return M
