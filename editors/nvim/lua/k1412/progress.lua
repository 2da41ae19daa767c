--- Server progress (`$/progress` through the LspProgress autocmd) and the statusline text.
local C = require('k1412.constants')
local events = require('k1412.events')
local render = require('k1412.render')

local M = {}

--- token -> latest message of a K1412 progress still going
--- @type table<string|integer, string>
local active = {}
local last_token

local function is_k1412(client_id)
  local client = vim.lsp.get_client_by_id(client_id)
  return client ~= nil and client.name == C.CLIENT_NAME
end

--- Handle one LspProgress autocmd (exposed for tests and custom autocmds).
--- @param data { client_id: integer, params: { token: string|integer, value: table } }
function M.on_progress(data)
  if type(data) ~= 'table' or type(data.params) ~= 'table' or not is_k1412(data.client_id) then
    return
  end
  local token, value = data.params.token, data.params.value
  if type(value) ~= 'table' then
    return
  end
  if value.kind == 'begin' then
    active[token] = value.title or 'K1412'
    last_token = token
    if vim.g.k1412_quiet_progress ~= true then
      vim.notify('K1412: ' .. render.clip(value.title or 'run started', 80), vim.log.levels.INFO)
    end
  elseif value.kind == 'report' then
    active[token] = value.message or active[token]
    last_token = token
  elseif value.kind == 'end' then
    active[token] = nil
  end
  vim.cmd('redrawstatus')
end

--- Start listening to LspProgress (idempotent).
function M.setup()
  local group = vim.api.nvim_create_augroup('k1412.progress', { clear = true })
  vim.api.nvim_create_autocmd('LspProgress', {
    group = group,
    callback = function(args)
      M.on_progress(args.data)
    end,
  })
end

--- Statusline text for the current run: its latest progress message (with the verification state),
--- else what the events say, else the last run's verdict; '' before any run.
--- @return string
function M.statusline()
  if last_token ~= nil and active[last_token] then
    return 'K1412 ⟳ ' .. render.clip(active[last_token], 60)
  end
  for _, message in pairs(active) do
    return 'K1412 ⟳ ' .. render.clip(message, 60)
  end
  local run = events.latest()
  if not run then
    return ''
  end
  if run.status == 'running' then
    return 'K1412 ⟳ ' .. (run.evidence and render.evidence_text(run.evidence) or render.clip(run.activity, 40))
  end
  return 'K1412: ' .. run.status
end

return M
