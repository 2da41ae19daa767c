/** Starting the K1412 language client: server command, settings, and the middleware hooks we need. */

import * as vscode from 'vscode';
import { LanguageClient, LanguageClientOptions, ServerOptions, State } from 'vscode-languageclient/node';

import { initializationOptions, parseServerCommand, readSettings, serverEnvironment } from './args';
import { CMD_DELEGATE, NOTIFY_EVENT, SETTINGS_SECTION, SETTING_SERVER_COMMAND } from './constants';
import { trustedGetter } from './trust';

/** Hooks the rest of the extension plugs into the client. */
export interface ClientHooks {
  /** Runs the delegate code action's command (the client would otherwise send it as is). */
  delegate(args: unknown[]): Promise<unknown>;
  /** Told whether the server is up (`running`), starting, or down with the reason shown to the user. */
  serverState(state: ServerState): void;
}

/** What the status bar says about the server itself. */
export type ServerState = { kind: 'starting' } | { kind: 'running' } | { kind: 'down'; reason: string };

/** The button on a failed start's error message. */
export const SHOW_SERVER_LOG = 'Show server log';

/** Build (not start) the language client from the current `k1412` settings. */
export function createClient(hooks: ClientHooks): LanguageClient {
  const config = vscode.workspace.getConfiguration(SETTINGS_SECTION);
  // A workspace may only restrict: the server command and config path come from user settings only.
  const get = trustedGetter((key) => config.inspect(key));
  const server = parseServerCommand(get(SETTING_SERVER_COMMAND));
  const cwd = vscode.workspace.workspaceFolders?.[0]?.uri.fsPath;
  // PYTHONSAFEPATH=1: a Python server started in the workspace folder never imports modules from it.
  const env = serverEnvironment(process.env);
  const serverOptions: ServerOptions = { command: server.command, args: server.args, options: { cwd, env } };
  const clientOptions: LanguageClientOptions = {
    // The agent works on any file, so every file and untitled buffer is synced.
    documentSelector: [{ scheme: 'file' }, { scheme: 'untitled' }],
    initializationOptions: initializationOptions(readSettings(get)),
    synchronize: { configurationSection: SETTINGS_SECTION },
    outputChannelName: 'K1412 Server',
    middleware: {
      executeCommand: (command, args, next) =>
        command === CMD_DELEGATE ? hooks.delegate(args) : next(command, args),
    },
  };
  return new K1412Client('k1412', 'K1412', serverOptions, clientOptions);
}

/**
 * The language client, except that its own "couldn't create connection to server" notification is
 * only logged: ClientManager.start shows one error for a failed start, with what to fix.
 */
class K1412Client extends LanguageClient {
  error(message: string, data?: unknown, showNotification: boolean | 'force' = true): void {
    super.error(message, data, message.includes("couldn't create connection to server") ? false : showNotification);
  }
}

/** Owns the running client: start, restart after a settings change, stop on deactivate. */
export class ClientManager implements vscode.Disposable {
  private client: LanguageClient | undefined;
  private stopping = false;

  constructor(private readonly hooks: ClientHooks, private readonly onEvent: (event: unknown) => void) {}

  /** The running client, or undefined when the server is not up. */
  get current(): LanguageClient | undefined {
    return this.client?.isRunning() ? this.client : undefined;
  }

  /**
   * Start the server. A failure is shown at once as an error saying what to fix, with a button that
   * opens the server's log, and the status bar says the server is down until a restart works.
   */
  async start(): Promise<void> {
    let client: LanguageClient;
    this.hooks.serverState({ kind: 'starting' });
    try {
      client = createClient(this.hooks);
    } catch (err) {
      const reason = err instanceof Error ? err.message : String(err);
      this.hooks.serverState({ kind: 'down', reason });
      void vscode.window.showErrorMessage(reason);
      return;
    }
    client.onNotification(NOTIFY_EVENT, (event: unknown) => this.onEvent(event));
    client.onDidChangeState((change) => {
      if (this.client !== client || this.stopping) {
        return;
      }
      if (change.newState === State.Running) {
        this.hooks.serverState({ kind: 'running' });
      } else if (change.newState === State.Stopped && change.oldState === State.Running) {
        this.hooks.serverState({ kind: 'down', reason: 'the server stopped; see the "K1412 Server" output' });
      }
    });
    this.client = client;
    try {
      await client.start();
      this.hooks.serverState({ kind: 'running' });
    } catch (err) {
      const config = vscode.workspace.getConfiguration(SETTINGS_SECTION);
      const command = trustedGetter((key) => config.inspect(key))(SETTING_SERVER_COMMAND);
      const reason = err instanceof Error ? err.message : String(err);
      this.hooks.serverState({ kind: 'down', reason });
      void vscode.window.showErrorMessage(
        `K1412 could not start its server ${JSON.stringify(command)} (${reason}); install k1412 or set `
        + 'k1412.server.command, then run "K1412: Restart language server".', SHOW_SERVER_LOG,
      ).then((choice) => {
        if (choice === SHOW_SERVER_LOG) {
          client.outputChannel.show(true);
        }
      });
    }
  }

  /** Show the server's stderr (the "K1412 Server" output channel), when a client exists. */
  showServerLog(): void {
    this.client?.outputChannel.show(true);
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
      this.stopping = true;
      await client.stop().catch(() => undefined);
      this.stopping = false;
    }
  }

  dispose(): void {
    void this.stop();
  }
}
