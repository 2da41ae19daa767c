/**
 * Argument building for the server: how to start it, what to send at initialize,
 * and the one-object arguments of k1412.runTask and k1412.delegate.
 * Pure: no `vscode` import, so node's test runner can exercise it.
 */

import { DEFAULT_SERVER_COMMAND } from './constants';

/** An executable and its arguments. */
export interface ServerCommand {
  command: string;
  args: string[];
}

/** The `k1412` settings the server reads (docs/configuration.md, "Editor settings"). */
export interface K1412Settings {
  model: string;
  configPath: string;
  user: string;
  confirmEdits: boolean;
  warmUpAtStart: boolean;
}

/** Arguments of k1412.runTask. */
export interface RunTaskArgs {
  task: string;
  model?: string;
  conversation?: string;
}

/** An LSP range, as the delegate code action carries it. */
export interface LspRange {
  start: { line: number; character: number };
  end: { line: number; character: number };
}

/** Arguments of k1412.delegate. */
export interface DelegateArgs {
  uri: string;
  range: LspRange;
  task?: string;
  write?: boolean;
}

/** Split a command line on whitespace, keeping single- or double-quoted parts together. */
export function splitCommandLine(line: string): string[] {
  const words: string[] = [];
  let current = '';
  let quote: string | undefined;
  let inWord = false;
  for (const ch of line) {
    if (quote !== undefined) {
      if (ch === quote) {
        quote = undefined;
      } else {
        current += ch;
      }
    } else if (ch === '"' || ch === "'") {
      quote = ch;
      inWord = true;
    } else if (/\s/.test(ch)) {
      if (inWord) {
        words.push(current);
        current = '';
        inWord = false;
      }
    } else {
      current += ch;
      inWord = true;
    }
  }
  if (quote !== undefined) {
    throw new Error(`The setting k1412.server.command has an unclosed ${quote} quote; close it or use an argument array.`);
  }
  if (inWord) {
    words.push(current);
  }
  return words;
}

/**
 * The environment the server starts with: the editor's own, with `PYTHONSAFEPATH=1`. The server starts in the
 * workspace folder, and a `python -m k1412_ls lsp` there would otherwise put that folder first on `sys.path`:
 * a `gettext.py` or a `k1412_ls/` package a command planted in the workspace would run as the server itself,
 * outside the sandbox, with the provider key in its environment.
 */
export function serverEnvironment(base: Record<string, string | undefined>): Record<string, string> {
  const env: Record<string, string> = {};
  for (const [name, value] of Object.entries(base)) {
    if (value !== undefined) {
      env[name] = value;
    }
  }
  env.PYTHONSAFEPATH = '1';
  return env;
}

/**
 * Read `k1412.server.command` (an argument array or one string) into an executable and its arguments.
 * Unset or empty means the default `k1412 lsp`.
 */
export function parseServerCommand(value: unknown): ServerCommand {
  let words: string[];
  if (value === undefined || value === null || value === '') {
    words = [...DEFAULT_SERVER_COMMAND];
  } else if (typeof value === 'string') {
    words = splitCommandLine(value);
  } else if (Array.isArray(value) && value.every((item) => typeof item === 'string')) {
    words = value as string[];
  } else {
    throw new Error('The setting k1412.server.command must be a string or an array of strings, such as ["k1412", "lsp"].');
  }
  if (words.length === 0 || words[0].trim() === '') {
    words = [...DEFAULT_SERVER_COMMAND];
  }
  return { command: words[0], args: words.slice(1) };
}

/** Normalise raw configuration values (any type, possibly missing) into settings. */
export function readSettings(get: (key: string) => unknown): K1412Settings {
  const text = (key: string): string => {
    const value = get(key);
    return typeof value === 'string' ? value.trim() : '';
  };
  return {
    model: text('model'),
    configPath: text('configPath'),
    user: text('user'),
    confirmEdits: get('confirmEdits') === true,
    warmUpAtStart: get('warmUpAtStart') === true,
  };
}

/**
 * initializationOptions for the server: the `k1412` settings with empty strings left out, and
 * warmUpAtStart only when it is on (the extension sends k1412.prepare when a prompt opens).
 */
export function initializationOptions(settings: K1412Settings): Record<string, string | boolean> {
  const options: Record<string, string | boolean> = { confirmEdits: settings.confirmEdits };
  if (settings.warmUpAtStart) {
    options.warmUpAtStart = true;
  }
  for (const key of ['model', 'configPath', 'user'] as const) {
    if (settings[key] !== '') {
      options[key] = settings[key];
    }
  }
  return options;
}

/** Arguments for k1412.runTask; an empty task is refused with a sentence for the user. */
export function buildRunTaskArgs(task: string, model?: string, conversation?: string): RunTaskArgs {
  const trimmed = task.trim();
  if (trimmed === '') {
    throw new Error('Type a task for K1412 to run, for example "Add a test for parse_date".');
  }
  const args: RunTaskArgs = { task: trimmed };
  if (model !== undefined && model.trim() !== '') {
    args.model = model.trim();
  }
  if (conversation !== undefined && conversation.trim() !== '') {
    args.conversation = conversation.trim();
  }
  return args;
}

function isPosition(value: unknown): value is { line: number; character: number } {
  const v = value as { line?: unknown; character?: unknown } | null;
  return typeof v === 'object' && v !== null && Number.isInteger(v.line) && Number.isInteger(v.character);
}

/**
 * Arguments for k1412.delegate: the code action's `{uri, range}` plus the user's optional instruction.
 * No instruction keeps the server's default (a read-only review of the selection).
 */
export function buildDelegateArgs(base: unknown, instruction: string | undefined, write: boolean): DelegateArgs {
  const b = base as { uri?: unknown; range?: { start?: unknown; end?: unknown } } | null;
  if (typeof b !== 'object' || b === null || typeof b.uri !== 'string' || typeof b.range !== 'object'
      || b.range === null || !isPosition(b.range.start) || !isPosition(b.range.end)) {
    throw new Error('The delegate action lost its selection; select the code again and rerun the action.');
  }
  const args: DelegateArgs = {
    uri: b.uri,
    range: {
      start: { line: b.range.start.line, character: b.range.start.character },
      end: { line: b.range.end.line, character: b.range.end.character },
    },
  };
  const text = instruction?.trim() ?? '';
  if (text !== '') {
    args.task = text;
    args.write = write;
  }
  return args;
}
