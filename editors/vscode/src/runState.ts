/**
 * Live state of the runs this client started, built from `k1412/event`
 * notifications and final results, and the status-bar text for it.
 * Pure: no `vscode` import.
 */

import { EvidenceState, K1412Event, clip, evidenceOf, evidenceText, eventDetail } from './events';
import { RunResult, RunStatus } from './result';

/** What the client knows about one run. */
export interface RunView {
  runId: string;
  status: 'running' | RunStatus;
  task?: string;
  activity: string;
  evidence?: EvidenceState;
  toolCalls: number;
  lastSeq: number;
}

/** Called whenever a run's view changes. */
export type RunListener = (view: RunView) => void;

const TERMINAL: Record<string, RunStatus> = {
  'run.unverified': 'unverified',
  'run.failed': 'failed',
  'run.cancelled': 'cancelled',
  'completion.unverified': 'unverified',
};

/** Folds events into per-run views and hands each new root run to the request that is waiting for it. */
export class RunTracker {
  private readonly runs = new Map<string, RunView>();
  private readonly waiters: Array<(runId: string) => void> = [];
  private readonly listeners: RunListener[] = [];
  private latestId: string | undefined;

  /** Subscribe to view changes; returns the unsubscribe function. */
  onChange(listener: RunListener): () => void {
    this.listeners.push(listener);
    return () => {
      const index = this.listeners.indexOf(listener);
      if (index >= 0) {
        this.listeners.splice(index, 1);
      }
    };
  }

  /**
   * Wait for the next root run this client sees start; requests are answered in the order they waited,
   * which matches the order the server creates their runs. Returns the function that stops waiting.
   */
  claimNextRun(callback: (runId: string) => void): () => void {
    this.waiters.push(callback);
    return () => {
      const index = this.waiters.indexOf(callback);
      if (index >= 0) {
        this.waiters.splice(index, 1);
      }
    };
  }

  /** Fold one event in; returns the updated view of its run. */
  apply(event: K1412Event): RunView {
    let view = this.runs.get(event.run_id);
    if (view === undefined) {
      view = { runId: event.run_id, status: 'running', activity: 'starting', toolCalls: 0, lastSeq: 0 };
      this.runs.set(event.run_id, view);
      this.latestId = event.run_id;
      if (event.depth === 0) {
        this.waiters.shift()?.(event.run_id);
      }
    }
    view.lastSeq = Math.max(view.lastSeq, event.seq);
    const evidence = evidenceOf(event.payload);
    if (evidence !== undefined) {
      view.evidence = evidence;
    }
    const task = event.payload.task;
    if (event.type === 'run.created' && event.depth === 0 && typeof task === 'string') {
      view.task = task;
    }
    if (event.type === 'tool.started') {
      view.toolCalls += 1;
    }
    const prefix = event.depth > 0 ? `sub-agent${event.agent_id ? ` ${event.agent_id}` : ''}: ` : '';
    const detail = eventDetail(event);
    view.activity = clip(`${prefix}${event.type}${detail !== '' ? ` ${detail}` : ''}`, 120);
    if (event.depth === 0) {
      const terminal = TERMINAL[event.type];
      if (terminal !== undefined) {
        view.status = terminal;
      } else if (event.type === 'run.completed') {
        const status = event.payload.status;
        // An unverified run may still close with run.completed: never upgrade it to success.
        if (status === 'completed' || status === 'unverified' || status === 'failed' || status === 'cancelled') {
          view.status = status;
        } else if (view.status === 'running') {
          view.status = 'completed';
        }
      }
    }
    this.notify(view);
    return view;
  }

  /** Record the final result of a run (the authority over anything inferred from events). */
  finish(result: RunResult): RunView {
    let view = this.runs.get(result.run_id);
    if (view === undefined) {
      view = { runId: result.run_id, status: result.status, activity: '', toolCalls: 0, lastSeq: 0 };
      this.runs.set(result.run_id, view);
      this.latestId = result.run_id;
    }
    view.status = result.status;
    view.evidence = evidenceOf(result) ?? view.evidence;
    view.activity = result.status;
    this.notify(view);
    return view;
  }

  /** The view of one run, if known. */
  get(runId: string): RunView | undefined {
    return this.runs.get(runId);
  }

  /** Runs still going, oldest first. */
  active(): RunView[] {
    return [...this.runs.values()].filter((view) => view.status === 'running');
  }

  /** The most recently started run, if any. */
  latest(): RunView | undefined {
    return this.latestId === undefined ? undefined : this.runs.get(this.latestId);
  }

  private notify(view: RunView): void {
    for (const listener of [...this.listeners]) {
      listener(view);
    }
  }
}

const ICONS: Record<RunView['status'], string> = {
  running: '$(sync~spin)',
  completed: '$(pass)',
  unverified: '$(warning)',
  failed: '$(error)',
  cancelled: '$(circle-slash)',
};

/** Status-bar text and tooltip for the current run (or idle when there is none). */
export function statusText(view: RunView | undefined, activeCount = view?.status === 'running' ? 1 : 0):
    { text: string; tooltip: string } {
  if (view === undefined) {
    return { text: '$(hubot) K1412', tooltip: 'K1412: no run yet. Run "K1412: Run task" from the command palette.' };
  }
  const evidence = view.evidence !== undefined ? evidenceText(view.evidence) : 'evidence not yet derived';
  const others = activeCount > 1 ? ` (+${activeCount - 1})` : '';
  const text = view.status === 'running'
    ? `${ICONS.running} K1412: running${others} · ${view.evidence ? evidenceText(view.evidence) : `${view.toolCalls} tool calls`}`
    : `${ICONS[view.status]} K1412: ${view.status}`;
  const tooltip = [
    `Run ${view.runId}: ${view.status}`,
    view.task !== undefined ? `Task: ${clip(view.task, 200)}` : '',
    `Verification: ${evidence}`,
    view.activity !== '' ? `Last: ${view.activity}` : '',
    'Click to show the run log.',
  ].filter((line) => line !== '').join('\n');
  return { text, tooltip };
}

/**
 * The progress line for a run built from its events (used until the server's own progress reports arrive):
 * the latest activity, then the verification state unless the activity already names it.
 */
export function progressMessage(view: RunView): string {
  const activity = clip(view.activity, 100);
  if (view.evidence === undefined) {
    return activity;
  }
  const evidence = evidenceText(view.evidence);
  return view.activity.includes(evidence) ? clip(view.activity, 160) : `${activity} · ${evidence}`;
}
