/** Extension entry point: wiring only. */

import * as vscode from 'vscode';

import { ClientManager } from './client';
import { delegateFromCodeAction, registerCommands } from './commands';
import { OUTPUT_CHANNEL_NAME, SETTINGS_SECTION, SETTING_SERVER_COMMAND } from './constants';
import { isK1412Event, renderEvent } from './events';
import { RunLauncher } from './runner';
import { RunTracker } from './runState';
import { RunStatusBar, SHOW_SERVER_LOG_COMMAND } from './statusBar';

let manager: ClientManager | undefined;

/** Start the server and register the commands, status bar and event log. */
export async function activate(context: vscode.ExtensionContext): Promise<void> {
  const output = vscode.window.createOutputChannel(OUTPUT_CHANNEL_NAME);
  const tracker = new RunTracker();
  const launcher = new RunLauncher(() => manager?.current, tracker, output);
  const statusBar = new RunStatusBar(tracker);
  manager = new ClientManager(
    {
      delegate: (args) => delegateFromCodeAction(launcher, output, args),
      serverState: (state) => statusBar.setServer(state),
    },
    (event) => {
      if (isK1412Event(event)) {
        output.appendLine(renderEvent(event));
        tracker.apply(event);
      }
    },
  );
  const clients = manager;
  context.subscriptions.push(output, statusBar, clients,
    vscode.commands.registerCommand(SHOW_SERVER_LOG_COMMAND, () => clients.showServerLog()));
  registerCommands(context, { launcher, tracker, output, restart: () => clients.restart() });
  context.subscriptions.push(vscode.workspace.onDidChangeConfiguration((change) => {
    // The other k1412 settings reach the running server through didChangeConfiguration.
    if (change.affectsConfiguration(`${SETTINGS_SECTION}.${SETTING_SERVER_COMMAND}`)) {
      void clients.restart();
    }
  }));
  await clients.start();
}

/** Stop the server with the extension. */
export async function deactivate(): Promise<void> {
  await manager?.stop();
  manager = undefined;
}
