/**
 * Every LSP method, command and setting name K1412 uses.
 * Mirrors k1412_ls/lsp/constants.py; tests/test_editor_files.py keeps the two in step.
 */

export const SERVER_NAME = 'k1412-ls';

export const CMD_RUN_TASK = 'k1412.runTask';
export const CMD_DELEGATE = 'k1412.delegate';
export const CMD_CANCEL_RUN = 'k1412.cancelRun';
export const CMD_LIST_MODELS = 'k1412.listModels';
export const CMD_UNDO_RUN = 'k1412.undoRun';
/** Sent when a task prompt opens: the server loads the run machinery while the user types. */
export const CMD_PREPARE = 'k1412.prepare';
export const COMMANDS = [CMD_RUN_TASK, CMD_DELEGATE, CMD_CANCEL_RUN, CMD_LIST_MODELS, CMD_UNDO_RUN, CMD_PREPARE] as const;

export const NOTIFY_EVENT = 'k1412/event';

export const CODE_ACTION_DELEGATE_TITLE = 'K1412: delegate to sub-agent';

/** Work-done progress titles are this prefix plus the task (clipped). */
export const PROGRESS_TITLE_PREFIX = 'K1412: ';

export const SETTINGS_SECTION = 'k1412';
export const SETTING_MODEL = 'model';
export const SETTING_CONFIG_PATH = 'configPath';
export const SETTING_USER = 'user';
export const SETTING_CONFIRM_EDITS = 'confirmEdits';
export const SETTING_WARM_UP_AT_START = 'warmUpAtStart';

/**
 * Palette command ids. The language client registers every server command id
 * (k1412.runTask, …) as a VS Code command itself, so ours need their own ids.
 */
export const PALETTE_RUN_TASK = 'k1412.palette.runTask';
export const PALETTE_CANCEL_RUN = 'k1412.palette.cancelRun';
export const PALETTE_SHOW_LOG = 'k1412.palette.showLog';
export const PALETTE_RESTART_SERVER = 'k1412.palette.restartServer';
export const PALETTE_UNDO_LAST_RUN = 'k1412.palette.undoLastRun';

/** Client-only setting: how to start the server. */
export const SETTING_SERVER_COMMAND = 'server.command';
export const DEFAULT_SERVER_COMMAND = ['k1412', 'lsp'];

export const OUTPUT_CHANNEL_NAME = 'K1412';
