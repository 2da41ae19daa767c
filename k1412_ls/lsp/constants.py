"""Every LSP method, command and setting name K1412 uses; mirrored by the editor clients."""

from __future__ import annotations

SERVER_NAME = "k1412-ls"

CMD_RUN_TASK = "k1412.runTask"
CMD_DELEGATE = "k1412.delegate"
CMD_CANCEL_RUN = "k1412.cancelRun"
CMD_LIST_MODELS = "k1412.listModels"
CMD_UNDO_RUN = "k1412.undoRun"
CMD_PREPARE = "k1412.prepare"  # the editor opened the task prompt: warm the run machinery
COMMANDS = (CMD_RUN_TASK, CMD_DELEGATE, CMD_CANCEL_RUN, CMD_LIST_MODELS, CMD_UNDO_RUN, CMD_PREPARE)

NOTIFY_EVENT = "k1412/event"

CODE_ACTION_DELEGATE_TITLE = "K1412: delegate to sub-agent"

SETTINGS_SECTION = "k1412"
SETTING_MODEL = "model"
SETTING_CONFIG_PATH = "configPath"
SETTING_USER = "user"
SETTING_CONFIRM_EDITS = "confirmEdits"
SETTING_WARM_UP_AT_START = "warmUpAtStart"

PROGRESS_TITLE_PREFIX = "K1412: "
EDIT_ANNOTATION_ID = "k1412"
LOGGER_NAME = "k1412.lsp"
# Largest JSON-RPC message body accepted; bigger frames are refused and skipped.
MAX_FRAME_BYTES = 64 * 1024 * 1024
