--- Every LSP method, command and setting name K1412 uses.
--- Mirrors k1412_ls/lsp/constants.py; tests/test_editor_files.py keeps the two in step.
local M = {}

M.SERVER_NAME = 'k1412-ls'
M.CLIENT_NAME = 'k1412'

M.CMD_RUN_TASK = 'k1412.runTask'
M.CMD_DELEGATE = 'k1412.delegate'
M.CMD_CANCEL_RUN = 'k1412.cancelRun'
M.CMD_LIST_MODELS = 'k1412.listModels'
M.CMD_UNDO_RUN = 'k1412.undoRun'
-- Sent when a task prompt opens: the server loads the run machinery while the user types.
M.CMD_PREPARE = 'k1412.prepare'

M.NOTIFY_EVENT = 'k1412/event'

M.CODE_ACTION_DELEGATE_TITLE = 'K1412: delegate to sub-agent'

-- Work-done progress titles are this prefix plus the task (clipped).
M.PROGRESS_TITLE_PREFIX = 'K1412: '

M.SETTINGS_SECTION = 'k1412'
M.SETTING_MODEL = 'model'
M.SETTING_CONFIG_PATH = 'configPath'
M.SETTING_USER = 'user'
M.SETTING_CONFIRM_EDITS = 'confirmEdits'
M.SETTING_WARM_UP_AT_START = 'warmUpAtStart'

M.DEFAULT_CMD = { 'k1412', 'lsp' }
M.ROOT_MARKERS = { '.k1412', '.git' }

return M
