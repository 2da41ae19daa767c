/** The status-bar item that shows the current run's state. */

import * as vscode from 'vscode';

import { PALETTE_SHOW_LOG } from './constants';
import { RunTracker, statusText } from './runState';

/** Keeps one status-bar item in step with the tracker's latest run. */
export class RunStatusBar implements vscode.Disposable {
  private readonly item = vscode.window.createStatusBarItem(vscode.StatusBarAlignment.Left, 10);
  private readonly unsubscribe: () => void;

  constructor(private readonly tracker: RunTracker) {
    this.item.command = PALETTE_SHOW_LOG;
    this.unsubscribe = tracker.onChange(() => this.refresh());
    this.refresh();
    this.item.show();
  }

  /** Redraw from the tracker: a running run wins over the latest finished one. */
  refresh(): void {
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
