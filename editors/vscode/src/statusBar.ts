/** The status-bar item that shows the current run's state. */

import * as vscode from 'vscode';

import { ServerState } from './client';
import { PALETTE_SHOW_LOG } from './constants';
import { RunTracker, statusText } from './runState';

/** Opens the server's stderr; registered by the extension, not listed in the palette. */
export const SHOW_SERVER_LOG_COMMAND = 'k1412.internal.showServerLog';

/** Keeps one status-bar item in step with the tracker's latest run. */
export class RunStatusBar implements vscode.Disposable {
  private readonly item = vscode.window.createStatusBarItem(vscode.StatusBarAlignment.Left, 10);
  private readonly unsubscribe: () => void;
  private server: ServerState = { kind: 'starting' };

  constructor(private readonly tracker: RunTracker) {
    this.item.command = PALETTE_SHOW_LOG;
    this.unsubscribe = tracker.onChange(() => this.refresh());
    this.refresh();
    this.item.show();
  }

  /** Say whether the server is up; a server that is down wins over any run state. */
  setServer(state: ServerState): void {
    this.server = state;
    this.refresh();
  }

  /** Redraw from the tracker: a running run wins over the latest finished one. */
  refresh(): void {
    if (this.server.kind === 'down') {
      this.item.text = '$(error) K1412: server not running';
      this.item.tooltip = `K1412 server: ${this.server.reason}\nClick to show the server log; then run `
        + '"K1412: Restart language server".';
      this.item.command = SHOW_SERVER_LOG_COMMAND;
      this.item.backgroundColor = new vscode.ThemeColor('statusBarItem.errorBackground');
      return;
    }
    this.item.command = PALETTE_SHOW_LOG;
    const active = this.tracker.active();
    const view = active.length > 0 ? active[active.length - 1] : this.tracker.latest();
    const { text, tooltip } = statusText(view, active.length);
    this.item.text = text;
    this.item.tooltip = tooltip;
    this.item.backgroundColor = view?.status === 'unverified' || view?.status === 'failed'
      ? new vscode.ThemeColor('statusBarItem.warningBackground')
      : undefined;
  }

  dispose(): void {
    this.unsubscribe();
    this.item.dispose();
  }
}
