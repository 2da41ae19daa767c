/** The palette commands and the delegate code action's prompt. */

import * as vscode from 'vscode';

import { buildDelegateArgs, buildRunTaskArgs, readSettings } from './args';
import {
  CMD_DELEGATE,
  CMD_RUN_TASK,
  PALETTE_CANCEL_RUN,
  PALETTE_RESTART_SERVER,
  PALETTE_RUN_TASK,
  PALETTE_SHOW_LOG,
  PALETTE_UNDO_LAST_RUN,
  SETTINGS_SECTION,
} from './constants';
import { clip } from './events';
import { askPrepared } from './prepare';
import { RunLauncher } from './runner';
import { RunTracker } from './runState';
import { trustedGetter } from './trust';

/** What the commands act on. */
export interface CommandDeps {
  launcher: RunLauncher;
  tracker: RunTracker;
  output: vscode.OutputChannel;
  restart(): Promise<void>;
}

/** Open an input box; the server loads its run machinery while the user types (k1412.prepare). */
function askForTask(launcher: RunLauncher, output: vscode.OutputChannel, options: vscode.InputBoxOptions)
  : Promise<string | undefined> {
  return askPrepared(() => launcher.prepare(), () => vscode.window.showInputBox(options),
    (reason) => output.appendLine(`K1412 could not prepare the server for a run (the run loads it instead): ${reason}`));
}

async function runTask(deps: CommandDeps): Promise<void> {
  const task = await askForTask(deps.launcher, deps.output, {
    title: 'K1412: run task',
    prompt: 'What should K1412 do? It reports "completed" only when tool results prove the work.',
    placeHolder: 'e.g. Add a test for parse_date and run it',
    ignoreFocusOut: true,
  });
  if (task === undefined) {
    return;
  }
  let args;
  try {
    const config = vscode.workspace.getConfiguration(SETTINGS_SECTION);
    const settings = readSettings(trustedGetter((key) => config.inspect(key)));
    args = buildRunTaskArgs(task, settings.model);
  } catch (err) {
    void vscode.window.showWarningMessage(err instanceof Error ? err.message : String(err));
    return;
  }
  await deps.launcher.run(CMD_RUN_TASK, args, `K1412: ${clip(args.task, 60)}`);
}

async function cancelRun(deps: CommandDeps): Promise<void> {
  const active = deps.tracker.active();
  if (active.length === 0) {
    void vscode.window.showInformationMessage('No K1412 run is active.');
    return;
  }
  let runId = active[0].runId;
  if (active.length > 1) {
    const pick = await vscode.window.showQuickPick(
      active.map((view) => ({ label: clip(view.task ?? view.runId, 80), description: view.runId, runId: view.runId })),
      { title: 'K1412: cancel which run?' },
    );
    if (pick === undefined) {
      return;
    }
    runId = pick.runId;
  }
  await deps.launcher.cancel(runId);
}

/**
 * Run the delegate code action: ask for an optional instruction (empty: read-only review of the selection)
 * and, when there is one, whether the sub-agent may edit files. Escape cancels the action.
 */
export async function delegateFromCodeAction(launcher: RunLauncher, output: vscode.OutputChannel,
  args: unknown[]): Promise<unknown> {
  const instruction = await askForTask(launcher, output, {
    title: 'K1412: delegate to sub-agent',
    prompt: 'Instruction for the sub-agent (leave empty for a read-only review of the selection)',
    ignoreFocusOut: true,
  });
  if (instruction === undefined) {
    return undefined;
  }
  let write = false;
  if (instruction.trim() !== '') {
    const mode = await vscode.window.showQuickPick(
      [
        { label: 'Read only', description: 'the sub-agent may read and run checks, not edit', write: false },
        { label: 'Allow edits', description: 'the sub-agent may edit files (edits arrive as workspace edits)', write: true },
      ],
      { title: 'K1412: may the sub-agent edit files?' },
    );
    if (mode === undefined) {
      return undefined;
    }
    write = mode.write;
  }
  let delegateArgs;
  try {
    delegateArgs = buildDelegateArgs(args[0], instruction, write);
  } catch (err) {
    void vscode.window.showWarningMessage(err instanceof Error ? err.message : String(err));
    return undefined;
  }
  const title = delegateArgs.task !== undefined ? `K1412 sub-agent: ${clip(delegateArgs.task, 60)}` : 'K1412 sub-agent: review';
  return launcher.run(CMD_DELEGATE, delegateArgs, title);
}

/** Register the palette commands; their ids differ from the server's command ids on purpose. */
export function registerCommands(context: vscode.ExtensionContext, deps: CommandDeps): void {
  context.subscriptions.push(
    vscode.commands.registerCommand(PALETTE_RUN_TASK, () => runTask(deps)),
    vscode.commands.registerCommand(PALETTE_CANCEL_RUN, () => cancelRun(deps)),
    vscode.commands.registerCommand(PALETTE_SHOW_LOG, () => deps.output.show(true)),
    vscode.commands.registerCommand(PALETTE_RESTART_SERVER, () => deps.restart()),
    vscode.commands.registerCommand(PALETTE_UNDO_LAST_RUN, () => deps.launcher.undo()),
  );
}
