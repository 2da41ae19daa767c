/** Running a server command as a cancellable notification, and showing its verdict. */

import { randomUUID } from 'node:crypto';

import * as vscode from 'vscode';
import { ExecuteCommandRequest, LanguageClient, WorkDoneProgress } from 'vscode-languageclient/node';

import { CMD_CANCEL_RUN, CMD_PREPARE, CMD_UNDO_RUN, PALETTE_SHOW_LOG } from './constants';
import { RunResult, isRunResult, verdictOf } from './result';
import { RunTracker, progressMessage } from './runState';
import { changedPaths, diskHoldsBuffer } from './tabs';
import { describeUndo, isUndoResult } from './undo';

const REQUEST_CANCELLED = -32800;

/** Starts runs on the server with a cancellable progress notification and reports how they ended. */
export class RunLauncher {
  constructor(
    private readonly client: () => LanguageClient | undefined,
    private readonly tracker: RunTracker,
    private readonly output: vscode.OutputChannel,
  ) {}

  /**
   * Run `command` with `args` until it returns its result. The notification's Cancel button cancels
   * the run with k1412.cancelRun (or, before the run exists, cancels the request itself).
   * The request carries its own work-done token, so the server's progress for this run (whose messages
   * carry its verification state) comes to this notification only: the language client shows no second
   * progress of its own for it.
   */
  async run(command: string, args: object, title: string): Promise<RunResult | undefined> {
    const client = this.client();
    if (client === undefined) {
      void vscode.window.showErrorMessage(
        'The K1412 server is not running; check the "K1412 Server" output, then run "K1412: Restart language server".');
      return undefined;
    }
    const result = await vscode.window.withProgress(
      { location: vscode.ProgressLocation.Notification, title, cancellable: true },
      async (progress, cancel) => {
        let runId: string | undefined;
        let serverReports = false;
        const token = `k1412-vscode-${randomUUID()}`;
        const request = new vscode.CancellationTokenSource();
        const stopWaiting = this.tracker.claimNextRun((id) => {
          runId = id;
        });
        const stopTracking = this.tracker.onChange((view) => {
          // The server's own reports already carry the verification state; events are the fallback.
          if (view.runId === runId && !serverReports) {
            progress.report({ message: progressMessage(view) });
          }
        });
        const serverProgress = client.onProgress(WorkDoneProgress.type, token, (value) => {
          if (value.kind === 'report' && value.message) {
            serverReports = true;
            progress.report({ message: value.message });
          }
        });
        const cancelling = cancel.onCancellationRequested(() => {
          if (runId !== undefined) {
            progress.report({ message: 'cancelling…' });
            void this.cancel(runId);
          } else {
            request.cancel();
          }
        });
        try {
          return await client.sendRequest(ExecuteCommandRequest.type,
            { command, arguments: [args], workDoneToken: token }, request.token);
        } catch (err) {
          const code = (err as { code?: unknown }).code;
          if (code === REQUEST_CANCELLED || request.token.isCancellationRequested) {
            void vscode.window.showInformationMessage('K1412 run cancelled before it started.');
          } else {
            const reason = err instanceof Error ? err.message : String(err);
            void vscode.window.showErrorMessage(`K1412 could not run the task: ${reason}`);
          }
          return undefined;
        } finally {
          stopWaiting();
          stopTracking();
          serverProgress.dispose();
          cancelling.dispose();
          request.dispose();
        }
      },
    );
    if (result === undefined || result === null) {
      return undefined;
    }
    if (!isRunResult(result)) {
      void vscode.window.showErrorMessage('K1412 returned a result this extension cannot read; update the extension or the server.');
      return undefined;
    }
    this.tracker.finish(result);
    await this.settleTabs(result);
    this.showVerdict(result);
    return result;
  }

  /**
   * Keep each tab's unsaved mark truthful (see tabs.ts): an open document the run changed whose text is
   * exactly what the server wrote to disk is saved (nothing new is written); one that differs stays unsaved.
   */
  private async settleTabs(result: RunResult): Promise<void> {
    const root = vscode.workspace.workspaceFolders?.[0]?.uri;
    if (root === undefined) {
      return;
    }
    for (const rel of changedPaths(result.files_changed)) {
      const uri = vscode.Uri.joinPath(root, rel);
      const document = vscode.workspace.textDocuments.find((doc) => doc.uri.toString() === uri.toString());
      if (document === undefined || !document.isDirty) {
        continue;
      }
      try {
        if (diskHoldsBuffer(await vscode.workspace.fs.readFile(uri), document.getText()) && !await document.save()) {
          this.output.appendLine(`K1412 wrote ${rel} to disk, but VS Code did not mark its tab saved; saving it `
            + 'again writes the same text.');
        }
      } catch (err) {
        this.output.appendLine(`K1412 could not compare ${rel} with the file on disk: ${String(err)}`);
      }
    }
  }

  /**
   * Tell the server a task prompt is open (k1412.prepare): it loads the run machinery while the user
   * types. Resolves with the server's `{ready, warming}`; undefined when no server is running.
   */
  prepare(): PromiseLike<unknown> | undefined {
    return this.client()?.sendRequest(ExecuteCommandRequest.type, { command: CMD_PREPARE, arguments: [{}] });
  }

  /** Ask the server to cancel a run; it ends `cancelled` and its request returns the result. */
  async cancel(runId: string): Promise<void> {
    const client = this.client();
    if (client === undefined) {
      void vscode.window.showErrorMessage('The K1412 server is not running, so there is no run to cancel.');
      return;
    }
    try {
      await client.sendRequest(ExecuteCommandRequest.type, { command: CMD_CANCEL_RUN, arguments: [{ run_id: runId }] });
    } catch (err) {
      const reason = err instanceof Error ? err.message : String(err);
      void vscode.window.showErrorMessage(`K1412 could not cancel run ${runId}: ${reason}`);
    }
  }

  /** Undo a run (default: the latest one in the workspace not undone yet) and say what happened. */
  async undo(runId?: string): Promise<void> {
    const client = this.client();
    if (client === undefined) {
      void vscode.window.showErrorMessage('The K1412 server is not running, so nothing can be undone.');
      return;
    }
    let result: unknown;
    try {
      result = await client.sendRequest(ExecuteCommandRequest.type,
        { command: CMD_UNDO_RUN, arguments: [runId === undefined ? {} : { run_id: runId }] });
    } catch (err) {
      void vscode.window.showErrorMessage(`K1412 could not undo: ${err instanceof Error ? err.message : String(err)}`);
      return;
    }
    if (!isUndoResult(result)) {
      void vscode.window.showErrorMessage('K1412 returned an undo result this extension cannot read; update it.');
      return;
    }
    const shown = describeUndo(result);
    this.output.appendLine(`== undo: ${shown.text}`);
    void (shown.severity === 'info' ? vscode.window.showInformationMessage : vscode.window.showWarningMessage)(shown.text);
  }

  private showVerdict(result: RunResult): void {
    const verdict = verdictOf(result);
    this.output.appendLine(`== ${verdict.text}`);
    const undo = result.files_changed.length > 0 ? ['Undo'] : [];
    const actions = [...undo, 'Show log', ...(result.events_path ? ['Open event log'] : [])];
    const show = verdict.severity === 'error' ? vscode.window.showErrorMessage
      : verdict.severity === 'warning' ? vscode.window.showWarningMessage : vscode.window.showInformationMessage;
    void show(verdict.text, ...actions).then(async (choice) => {
      if (choice === 'Undo') {
        await this.undo(result.run_id);
      } else if (choice === 'Show log') {
        await vscode.commands.executeCommand(PALETTE_SHOW_LOG);
      } else if (choice === 'Open event log') {
        await vscode.window.showTextDocument(vscode.Uri.file(result.events_path));
      }
    });
  }
}
