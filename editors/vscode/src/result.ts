/**
 * The result object of k1412.runTask (docs/events.md, "The result object") and how its verdict reads to the user.
 * Pure: no `vscode` import.
 */

import { EvidenceState, clip, evidenceOf, evidenceText } from './events';

/** Terminal states of a run. */
export type RunStatus = 'completed' | 'unverified' | 'failed' | 'cancelled';

/** What k1412.runTask and k1412.delegate return when the run ends. */
export interface RunResult {
  run_id: string;
  status: RunStatus;
  message: string;
  evidence: EvidenceState;
  files_changed: string[];
  iterations: number;
  usage: Record<string, number>;
  events_path: string;
}

const STATUSES: readonly string[] = ['completed', 'unverified', 'failed', 'cancelled'];

/** True when `value` has the result shape the client relies on. */
export function isRunResult(value: unknown): value is RunResult {
  const v = value as Partial<RunResult> | null;
  return typeof v === 'object' && v !== null && typeof v.run_id === 'string'
    && typeof v.status === 'string' && STATUSES.includes(v.status);
}

/** How loudly a verdict is shown. */
export type Severity = 'info' | 'warning' | 'error';

/** A verdict ready for a notification. */
export interface Verdict {
  severity: Severity;
  text: string;
}

function filesText(files: string[]): string {
  if (files.length === 0) {
    return 'no files changed';
  }
  const shown = files.slice(0, 3).join(', ');
  const more = files.length > 3 ? ` and ${files.length - 3} more` : '';
  return `${files.length} file${files.length === 1 ? '' : 's'} changed (${shown}${more})`;
}

/** The one-line verdict of a finished run; `unverified` is never worded as success. */
export function verdictOf(result: RunResult): Verdict {
  const files = Array.isArray(result.files_changed) ? result.files_changed : [];
  const evidence = evidenceOf(result);
  const message = typeof result.message === 'string' ? clip(result.message, 200) : '';
  switch (result.status) {
    case 'completed':
      return {
        severity: 'info',
        text: `K1412 completed, verified: ${filesText(files)}${evidence ? `; ${evidenceText(evidence)}` : ''}.`,
      };
    case 'unverified': {
      const missing = evidence && evidence.missing.length > 0 ? evidence.missing.join(', ') : 'unknown';
      return {
        severity: 'warning',
        text: `K1412 unverified: no tool result proved the work (missing evidence: ${missing}); ${filesText(files)}.`
          + (message !== '' ? ` Model said: ${message}` : ''),
      };
    }
    case 'failed':
      return { severity: 'error', text: `K1412 failed: ${message !== '' ? message : 'the run stopped with an error'}` };
    case 'cancelled':
      return { severity: 'info', text: `K1412 run cancelled; ${filesText(files)}.` };
  }
}
