--- The runs this Neovim has seen, folded from `k1412/event` notifications.
local render = require('k1412.render')

local M = {}

local MAX_RUNS = 20
local MAX_EVENTS = 5000

--- @class k1412.Run
--- @field run_id string
--- @field status string running|completed|unverified|failed|cancelled
--- @field task string?
--- @field activity string
--- @field evidence table?
--- @field lines string[] rendered events, oldest first

--- @type table<string, k1412.Run>
local runs = {}
--- @type string[] run ids, oldest first
local order = {}
--- @type fun(run: k1412.Run, line: string)[]
local listeners = {}

local TERMINAL = {
  ['run.unverified'] = 'unverified',
  ['run.failed'] = 'failed',
  ['run.cancelled'] = 'cancelled',
  ['completion.unverified'] = 'unverified',
}
local STATUSES = { completed = true, unverified = true, failed = true, cancelled = true }

local function get_or_create(run_id)
  local run = runs[run_id]
  if run then
    return run, false
  end
  run = { run_id = run_id, status = 'running', activity = 'starting', lines = {} }
  runs[run_id] = run
  order[#order + 1] = run_id
  if #order > MAX_RUNS then
    runs[table.remove(order, 1)] = nil
  end
  return run, true
end

--- Fold one event in (also the entry point for tests and replays).
--- @param event table an event (docs/events.md)
--- @return k1412.Run?
function M.record(event)
  if type(event) ~= 'table' or type(event.run_id) ~= 'string' or type(event.type) ~= 'string' then
    return nil
  end
  local run = get_or_create(event.run_id)
  local depth = type(event.depth) == 'number' and event.depth or 0
  local payload = type(event.payload) == 'table' and event.payload or {}
  local line = render.event_line(event)
  run.lines[#run.lines + 1] = line
  if #run.lines > MAX_EVENTS then
    table.remove(run.lines, 1)
  end
  run.evidence = render.evidence_of(payload) or run.evidence
  if event.type == 'run.created' and depth == 0 and type(payload.task) == 'string' then
    run.task = payload.task
  end
  local prefix = depth > 0 and 'sub-agent: ' or ''
  run.activity = render.clip(prefix .. event.type .. ' ' .. render.event_detail(event), 100)
  if depth == 0 then
    if TERMINAL[event.type] then
      run.status = TERMINAL[event.type]
    elseif event.type == 'run.completed' then
      -- An unverified run may still close with run.completed: never upgrade it to success.
      if STATUSES[payload.status] then
        run.status = payload.status
      elseif run.status == 'running' then
        run.status = 'completed'
      end
    end
  end
  for _, listener in ipairs(listeners) do
    listener(run, line)
  end
  return run
end

--- Handler for the `k1412/event` notification (wired in the lsp config).
function M.handler(_, event, _)
  M.record(event)
end

--- Record a run's final result (the authority over what the events implied).
--- @param result table
function M.finish(result)
  if type(result) ~= 'table' or type(result.run_id) ~= 'string' then
    return
  end
  local run = get_or_create(result.run_id)
  if STATUSES[result.status] then
    run.status = result.status
  end
  run.evidence = render.evidence_of(result) or run.evidence
  run.activity = tostring(result.status)
  for _, listener in ipairs(listeners) do
    listener(run, nil)
  end
end

--- @param run_id string
--- @return k1412.Run?
function M.get(run_id)
  return runs[run_id]
end

--- The most recent run, if any.
--- @return k1412.Run?
function M.latest()
  local id = order[#order]
  return id and runs[id] or nil
end

--- Runs still going, oldest first.
--- @return k1412.Run[]
function M.active()
  local out = {}
  for _, id in ipairs(order) do
    if runs[id].status == 'running' then
      out[#out + 1] = runs[id]
    end
  end
  return out
end

--- Call `fn(run, line_or_nil)` after every recorded event or result.
function M.subscribe(fn)
  listeners[#listeners + 1] = fn
end

return M
