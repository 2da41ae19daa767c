--- :K1412Log, a scratch buffer with one line per event of a run, kept live while the run goes on.
local events = require('k1412.events')

local M = {}

local BUFNAME = 'k1412://log'
--- @type { buf: integer?, run_id: string? }
local shown = {}

local function header(run)
  local task = run.task and (' · ' .. require('k1412.render').clip(run.task, 80)) or ''
  return ('K1412 run %s · %s%s'):format(run.run_id, run.status, task)
end

local function set_lines(buf, first, last, lines)
  vim.bo[buf].modifiable = true
  vim.api.nvim_buf_set_lines(buf, first, last, false, lines)
  vim.bo[buf].modifiable = false
end

local function log_buffer()
  if shown.buf and vim.api.nvim_buf_is_valid(shown.buf) then
    return shown.buf
  end
  local buf = vim.api.nvim_create_buf(false, true)
  vim.api.nvim_buf_set_name(buf, BUFNAME)
  vim.bo[buf].buftype = 'nofile'
  vim.bo[buf].bufhidden = 'hide'
  vim.bo[buf].swapfile = false
  vim.bo[buf].filetype = 'k1412log'
  vim.bo[buf].modifiable = false
  shown.buf = buf
  return buf
end

--- Open the log of `run_id` (default: the latest run) in a split, or focus it if it is already visible.
--- @param run_id string?
--- @return integer? bufnr
function M.open(run_id)
  local run = (run_id and run_id ~= '') and events.get(run_id) or events.latest()
  if not run then
    vim.notify(run_id and run_id ~= '' and ('K1412 has no events of run ' .. run_id .. '; check the run id.')
      or 'K1412 has no run to show yet; start one with :K1412Run.', vim.log.levels.INFO)
    return nil
  end
  local buf = log_buffer()
  shown.run_id = run.run_id
  set_lines(buf, 0, -1, vim.list_extend({ header(run) }, run.lines))
  local win = vim.fn.bufwinid(buf)
  if win == -1 then
    vim.cmd('botright split')
    vim.api.nvim_win_set_buf(0, buf)
  else
    vim.api.nvim_set_current_win(win)
  end
  vim.api.nvim_win_set_cursor(0, { vim.api.nvim_buf_line_count(buf), 0 })
  return buf
end

--- Lines currently in the log buffer (for tests and scripts).
--- @return string[]
function M.lines()
  if shown.buf and vim.api.nvim_buf_is_valid(shown.buf) then
    return vim.api.nvim_buf_get_lines(shown.buf, 0, -1, false)
  end
  return {}
end

events.subscribe(function(run, line)
  if not (shown.buf and vim.api.nvim_buf_is_valid(shown.buf)) or shown.run_id ~= run.run_id then
    return
  end
  -- Handlers may run where buffers cannot change (textlock): append on the main loop.
  vim.schedule(function()
    if not vim.api.nvim_buf_is_valid(shown.buf) or shown.run_id ~= run.run_id then
      return
    end
    set_lines(shown.buf, 0, 1, { header(run) })
    if line then
      set_lines(shown.buf, -1, -1, { line })
    end
  end)
end)

return M
