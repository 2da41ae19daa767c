import assert from 'node:assert/strict';
import { describe, it } from 'node:test';

import { describeUndo, isUndoResult } from '../undo';

describe('describeUndo', () => {
  it('a full undo is information', () => {
    const shown = describeUndo({ ok: true, run_id: 'run-1', restored: ['a.py'], refused: [],
      message: 'Restored all 1 path(s) that run run-1 changed.' });
    assert.deepEqual(shown, { text: 'Restored all 1 path(s) that run run-1 changed.', severity: 'info' });
  });
  it('refused paths are named with their reason and warn', () => {
    const shown = describeUndo({ ok: false, run_id: 'run-1', restored: ['b.py'],
      refused: [{ path: 'a.py', reason: 'it has unsaved changes in the editor made after the run' }],
      message: 'Restored 1 path(s) of run run-1; refused 1.' });
    assert.equal(shown.severity, 'warning');
    assert.match(shown.text, /Refused: a\.py \(it has unsaved changes in the editor made after the run\)\.$/);
  });
  it('recognises only undo results', () => {
    assert.equal(isUndoResult({ ok: false, restored: [], refused: [], message: 'x' }), true);
    assert.equal(isUndoResult({ status: 'completed' }), false);
    assert.equal(isUndoResult(null), false);
  });
});
