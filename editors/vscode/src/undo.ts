/** The result object of k1412.undoRun and how it reads to the user. */

export interface UndoResult {
  ok: boolean;
  run_id: string;
  restored: string[];
  refused: Array<{ path: string; reason: string }>;
  message: string;
}

export function isUndoResult(value: unknown): value is UndoResult {
  const v = value as UndoResult | null;
  return typeof v === 'object' && v !== null && typeof v.ok === 'boolean' && Array.isArray(v.restored)
    && Array.isArray(v.refused) && typeof v.message === 'string';
}

/** One notification line: what was restored and, path by path, what was refused and why. */
export function describeUndo(result: UndoResult): { text: string; severity: 'info' | 'warning' } {
  const refused = result.refused.map((r) => `${r.path} (${r.reason})`);
  const text = refused.length > 0 ? `${result.message} Refused: ${refused.join('; ')}.` : result.message;
  return { text, severity: result.ok ? 'info' : 'warning' };
}
