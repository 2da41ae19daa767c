-- K1412 user commands and progress tracking. The server itself starts through
-- `vim.lsp.enable('k1412')` (config in lsp/k1412.lua).
if vim.g.loaded_k1412 then
  return
end
vim.g.loaded_k1412 = true

vim.api.nvim_create_user_command('K1412Run', function(args)
  local task = vim.trim(args.args)
  if task ~= '' then
    require('k1412').run(task)
    return
  end
  -- The server loads its run machinery while the user types (k1412.prepare).
  require('k1412.client').prepare(nil, vim.api.nvim_get_current_buf())
  vim.ui.input({ prompt = 'K1412 task: ' }, function(input)
    if input and vim.trim(input) ~= '' then
      require('k1412').run(input)
    end
  end)
end, { nargs = '*', desc = 'K1412: run a task (prompts when none is given)' })

local function run_ids()
  local ids = {}
  local run = require('k1412.events').latest()
  if run then
    ids[1] = run.run_id
  end
  for _, active in ipairs(require('k1412.events').active()) do
    if active.run_id ~= ids[1] then
      ids[#ids + 1] = active.run_id
    end
  end
  return ids
end

vim.api.nvim_create_user_command('K1412Cancel', function(args)
  require('k1412').cancel(args.args)
end, { nargs = '?', complete = run_ids, desc = 'K1412: cancel the active run (or the given run id)' })

vim.api.nvim_create_user_command('K1412Undo', function(args)
  require('k1412').undo(args.args)
end, { nargs = '?', complete = run_ids, desc = 'K1412: undo a run (default: the latest one not undone yet)' })

vim.api.nvim_create_user_command('K1412Log', function(args)
  require('k1412').log(args.args)
end, { nargs = '?', complete = run_ids, desc = "K1412: show a run's events (default: the latest run)" })

require('k1412.progress').setup()
