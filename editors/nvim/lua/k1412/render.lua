--- Pure text rendering: event lines, the verification state and a run's verdict.
--- Same wording as the VS Code extension (editors/vscode/src/events.ts and result.ts).
local M = {}

--- @param value any
--- @return boolean
local function present(value)
  return value ~= nil and value ~= vim.NIL
end

--- One line of at most `max` characters.
--- @param text any
--- @param max integer
--- @return string
function M.clip(text, max)
  local flat = vim.trim((tostring(text):gsub('%s+', ' ')))
  if vim.fn.strchars(flat) <= max then
    return flat
  end
  return vim.fn.strcharpart(flat, 0, max - 1) .. '…'
end

local function string_list(value)
  if type(value) ~= 'table' then
    return nil
  end
  for _, item in ipairs(value) do
    if type(item) ~= 'string' then
      return nil
    end
  end
  return value
end

--- The evidence state in a payload or result (nested under `evidence` or at top level).
--- @param source any
--- @return { required: string[], satisfied: string[], missing: string[] }?
function M.evidence_of(source)
  if type(source) ~= 'table' then
    return nil
  end
  -- Run ends carry `evidence`, model requests `verification`, completion events the lists themselves.
  local holder = source
  if type(source.evidence) == 'table' then
    holder = source.evidence
  elseif type(source.verification) == 'table' then
    holder = source.verification
  end
  local required = string_list(holder.required)
  local satisfied = string_list(holder.satisfied)
  local missing = string_list(holder.missing)
  if not required and not satisfied and not missing then
    return nil
  end
  return { required = required or {}, satisfied = satisfied or {}, missing = missing or {} }
end

--- The verification state in a few words, e.g. "evidence 1/2, missing: execution".
function M.evidence_text(evidence)
  if #evidence.required == 0 then
    return 'no evidence required'
  end
  local done = 0
  for _, kind in ipairs(evidence.required) do
    if vim.tbl_contains(evidence.satisfied, kind) then
      done = done + 1
    end
  end
  local base = ('evidence %d/%d'):format(done, #evidence.required)
  if #evidence.missing > 0 then
    return base .. ', missing: ' .. table.concat(evidence.missing, ', ')
  end
  return base .. ' ✓'
end

local function text(payload, ...)
  for _, key in ipairs({ ... }) do
    local value = payload[key]
    if type(value) == 'string' and value ~= '' then
      return value
    elseif type(value) == 'number' then
      return tostring(value)
    end
  end
  return nil
end

local function short(value, max)
  if type(value) == 'string' then
    return vim.json.encode(M.clip(value, max))
  end
  return M.clip(vim.json.encode(value), max)
end

--- `key=value` pairs of a tool call's public arguments, keys sorted.
function M.argument_summary(args, max)
  max = max or 60
  if type(args) ~= 'table' then
    return present(args) and short(args, max) or ''
  end
  local parts = {}
  for _, key in ipairs(vim.tbl_keys(args)) do
    parts[#parts + 1] = key
  end
  table.sort(parts)
  for i, key in ipairs(parts) do
    parts[i] = key .. '=' .. short(args[key], max)
  end
  return table.concat(parts, ' ')
end

--- The one argument that says what a finished tool call was about (its path, command, …).
function M.argument_hint(args)
  if type(args) ~= 'table' then
    return ''
  end
  for _, key in ipairs({ 'path', 'command', 'query', 'process_id', 'role', 'memory_id' }) do
    if type(args[key]) == 'string' and args[key] ~= '' then
      return M.clip(args[key], 60)
    end
  end
  return ''
end

local function with_evidence(detail, payload)
  local evidence = M.evidence_of(payload)
  if not evidence then
    return detail
  end
  if detail == '' then
    return M.evidence_text(evidence)
  end
  return detail .. ' · ' .. M.evidence_text(evidence)
end

--- The type-specific part of an event line.
function M.event_detail(event)
  local p = type(event.payload) == 'table' and event.payload or {}
  local t = event.type
  if t == 'run.created' then
    local parts = {}
    if text(p, 'task') then
      parts[#parts + 1] = 'task ' .. short(p.task, 120)
    end
    if text(p, 'model') then
      parts[#parts + 1] = 'model ' .. p.model
    end
    return table.concat(parts, ' · ')
  elseif t == 'context.built' then
    local parts = {}
    if type(p.messages) == 'number' then
      parts[#parts + 1] = p.messages .. ' messages'
    end
    if type(p.dropped) == 'number' and p.dropped > 0 then
      parts[#parts + 1] = p.dropped .. ' older dropped'
    end
    if type(p.tools) == 'table' then
      parts[#parts + 1] = #p.tools .. ' tools'
    end
    return with_evidence(table.concat(parts, ', '), p)
  elseif t == 'tool.started' then
    local args = present(p.arguments) and p.arguments or p.args
    return vim.trim((text(p, 'tool', 'name') or 'tool') .. ' ' .. M.argument_summary(args))
  elseif t == 'tool.completed' then
    local hint = M.argument_hint(present(p.arguments) and p.arguments or p.args)
    local line = (text(p, 'tool', 'name') or 'tool') .. (hint ~= '' and (' ' .. hint) or '')
      .. (p.ok == false and ' failed' or ' ok')
    if type(p.facts) == 'table' and type(p.facts.exit_code) == 'number' then
      line = line .. ' exit ' .. p.facts.exit_code
    end
    local ms = type(p.run_ms) == 'number' and p.run_ms or p.duration_ms
    if type(ms) == 'number' then
      line = line .. (' (%d ms)'):format(ms)
    end
    if text(p, 'error') then
      line = line .. ': ' .. M.clip(p.error, 160)
    end
    return with_evidence(line, p)
  elseif t == 'completion.rejected' or t == 'completion.unverified' then
    local reason = text(p, 'reason', 'message')
    return with_evidence(reason and M.clip(reason, 160) or '', p)
  elseif t == 'run.completed' or t == 'run.unverified' or t == 'run.failed' or t == 'run.cancelled' then
    local status = text(p, 'status') or t:sub(5)
    local message = text(p, 'message', 'reason', 'error')
    return with_evidence(message and (status .. ': ' .. M.clip(message, 160)) or status, p)
  elseif t == 'tool.batch_limited' or t == 'agent.spawned' or t == 'agent.completed'
    or t == 'model.requested' or t == 'model.responded' then
    local parts = {}
    if text(p, 'iteration') then
      parts[#parts + 1] = 'iteration ' .. text(p, 'iteration')
    end
    for _, key in ipairs({ 'model', 'role', 'agent_id', 'status', 'task' }) do
      if text(p, key) then
        parts[#parts + 1] = key == 'task' and short(p.task, 80) or text(p, key)
      end
    end
    if p.ok == false then
      parts[#parts + 1] = 'error: ' .. M.clip(text(p, 'error') or 'unknown', 160)
    end
    if type(p.tool_calls) == 'table' and #p.tool_calls == 0 then
      parts[#parts + 1] = 'answered'
    elseif type(p.tool_calls) == 'table' then
      local names = {}
      for _, call in ipairs(p.tool_calls) do
        if type(call) == 'table' and type(call.name) == 'string' then
          names[#names + 1] = call.name
        end
      end
      if #names > 0 and #names == #p.tool_calls then
        parts[#parts + 1] = '→ ' .. table.concat(names, ', ')
      else
        parts[#parts + 1] = #p.tool_calls .. ' tool calls'
      end
    elseif type(p.tool_calls) == 'number' then
      parts[#parts + 1] = p.tool_calls .. ' tool calls'
    end
    return with_evidence(table.concat(parts, ' · '), p)
  end
  if next(p) == nil then
    return ''
  end
  return M.clip(vim.json.encode(p), 200)
end

--- One log line: time, sequence, nesting, type and detail.
function M.event_line(event)
  local clock = type(event.ts) == 'string' and event.ts:match('T(%d%d:%d%d:%d%d)') or '--:--:--'
  local depth = type(event.depth) == 'number' and event.depth or 0
  local agent = ''
  if depth > 0 and type(event.agent_id) == 'string' then
    agent = '[' .. event.agent_id .. '] '
  end
  local detail = M.event_detail(event)
  return ('%s #%s %s%s%s%s'):format(clock, tostring(event.seq), string.rep('  ', depth), agent, event.type,
    detail ~= '' and (' ' .. detail) or '')
end

local function files_text(files)
  if type(files) ~= 'table' or #files == 0 then
    return 'no files changed'
  end
  local shown = table.concat(vim.list_slice(files, 1, 3), ', ')
  local more = #files > 3 and (' and %d more'):format(#files - 3) or ''
  return ('%d file%s changed (%s%s)'):format(#files, #files == 1 and '' or 's', shown, more)
end

--- The verdict of a finished run and the vim.log level to show it at; `unverified` is never success.
--- @param result table the k1412.runTask result object
--- @return string text, integer level
function M.verdict(result)
  local evidence = M.evidence_of(result)
  local message = text(result, 'message')
  local files = files_text(result.files_changed)
  local status = result.status
  if status == 'completed' then
    return ('K1412 completed, verified: %s%s.'):format(files, evidence and ('; ' .. M.evidence_text(evidence)) or ''),
      vim.log.levels.INFO
  elseif status == 'unverified' then
    local missing = evidence and #evidence.missing > 0 and table.concat(evidence.missing, ', ') or 'unknown'
    return ('K1412 unverified: no tool result proved the work (missing evidence: %s); %s.%s'):format(
      missing, files, message and (' Model said: ' .. M.clip(message, 200)) or ''), vim.log.levels.WARN
  elseif status == 'failed' then
    return 'K1412 failed: ' .. (message and M.clip(message, 200) or 'the run stopped with an error'), vim.log.levels.ERROR
  elseif status == 'cancelled' then
    return ('K1412 run cancelled; %s.'):format(files), vim.log.levels.INFO
  end
  return 'K1412 returned a result this plugin cannot read; update the plugin or the server.', vim.log.levels.ERROR
end

return M
