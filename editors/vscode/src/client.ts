/** Starting the K1412 language client: server command, settings, and the middleware hooks we need. */

import * as vscode from 'vscode';
import {
  LanguageClient,
  LanguageClientOptions,
  ProgressToken,
  ServerOptions,
  WorkDoneProgressBegin,
  WorkDoneProgressEnd,
  WorkDoneProgressReport,
} from 'vscode-languageclient/node';

import { initializationOptions, parseServerCommand, readSettings } from './args';
import { CMD_DELEGATE, NOTIFY_EVENT, SETTINGS_SECTION, SETTING_SERVER_COMMAND } from './constants';

/** A `$/progress` value the server sent. */
export type ServerProgress = WorkDoneProgressBegin | WorkDoneProgressReport | WorkDoneProgressEnd;

/** Hooks the rest of the extension plugs into the client. */
export interface ClientHooks {
  /** Runs the delegate code action's command (the client would otherwise send it as is). */
  delegate(args: unknown[]): Promise<unknown>;
  /** Sees every server progress value (after the client's own status-bar progress got it). */
  progress(token: ProgressToken, value: ServerProgress): void;
}

/** Build (not start) the language client from the current `k1412` settings. */
export function createClient(hooks: ClientHooks): LanguageClient {
  const config = vscode.workspace.getConfiguration(SETTINGS_SECTION);
  const server = parseServerCommand(config.get(SETTING_SERVER_COMMAND));
  const cwd = vscode.workspace.workspaceFolders?.[0]?.uri.fsPath;
  const serverOptions: ServerOptions = { command: server.command, args: server.args, options: { cwd } };
  const clientOptions: LanguageClientOptions = {
    // The agent works on any file, so every file and untitled buffer is synced.
    documentSelector: [{ scheme: 'file' }, { scheme: 'untitled' }],
    initializationOptions: initializationOptions(readSettings((key) => config.get(key))),
    synchronize: { configurationSection: SETTINGS_SECTION },
    outputChannelName: 'K1412 Server',
    middleware: {
      executeCommand: (command, args, next) =>
        command === CMD_DELEGATE ? hooks.delegate(args) : next(command, args),
      handleWorkDoneProgress: (token, params, next) => {
        next(token, params);
        hooks.progress(token, params);
      },
    },
  };
  return new LanguageClient('k1412', 'K1412', serverOptions, clientOptions);
}

/** Owns the running client: start, restart after a settings change, stop on deactivate. */
export class ClientManager implements vscode.Disposable {
  private client: LanguageClient | undefined;

  constructor(private readonly hooks: ClientHooks, private readonly onEvent: (event: unknown) => void) {}

  /** The running client, or undefined when the server is not up. */
  get current(): LanguageClient | undefined {
    return this.client?.isRunning() ? this.client : undefined;
  }

  /** Start the server; a failure is shown as one sentence saying what to fix. */
  async start(): Promise<void> {
    let client: LanguageClient;
    try {
      client = createClient(this.hooks);
    } catch (err) {
      void vscode.window.showErrorMessage(err instanceof Error ? err.message : String(err));
      return;
    }
    client.onNotification(NOTIFY_EVENT, (event: unknown) => this.onEvent(event));
    this.client = client;
    try {
      await client.start();
    } catch (err) {
      const command = vscode.workspace.getConfiguration(SETTINGS_SECTION).get(SETTING_SERVER_COMMAND);
      const reason = err instanceof Error ? err.message : String(err);
      void vscode.window.showErrorMessage(
        `K1412 could not start its server ${JSON.stringify(command)} (${reason}); install k1412 or set `
        + 'k1412.server.command, then run "K1412: Restart language server".');
    }
  }

  /** Stop the current server (if any) and start a new one from the current settings. */
  async restart(): Promise<void> {
    await this.stop();
    await this.start();
  }

  /** Stop the server; a server that is already gone is not an error. */
  async stop(): Promise<void> {
    const client = this.client;
    this.client = undefined;
    if (client !== undefined && client.isRunning()) {
      await client.stop().catch(() => undefined);
    }
  }

  dispose(): void {
    void this.stop();
  }
}
