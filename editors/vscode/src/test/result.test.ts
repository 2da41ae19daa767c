import assert from 'node:assert/strict';
import { describe, it } from 'node:test';

import { RunResult, isRunResult, verdictOf } from '../result';

function result(status: RunResult['status'], extra: Partial<RunResult> = {}): RunResult {
  return {
    run_id: 'r-1', status, message: 'Done: x is now 2.',
    evidence: { required: ['artifact'], satisfied: ['artifact'], missing: [] },
    files_changed: ['app.py'], iterations: 3, usage: { prompt_tokens: 10 }, events_path: '/s/runs/r-1.jsonl', ...extra,
  };
}

describe('verdictOf', () => {
  const cases: Array<[string, RunResult, string, RegExp]> = [
    ['completed lists files and evidence', result('completed'), 'info',
      /^K1412 completed, verified: 1 file changed \(app\.py\); evidence 1\/1 ✓\.$/],
    ['unverified names the missing evidence and is not worded as success',
      result('unverified', { evidence: { required: ['artifact', 'execution'], satisfied: ['artifact'], missing: ['execution'] } }),
      'warning', /^K1412 unverified: no tool result proved the work \(missing evidence: execution\)/],
    ['failed shows the reason', result('failed', { message: 'Set OPENAI_API_KEY and retry.' }), 'error',
      /^K1412 failed: Set OPENAI_API_KEY and retry\.$/],
    ['cancelled', result('cancelled', { files_changed: [] }), 'info', /^K1412 run cancelled; no files changed\.$/],
    ['many files are summarised', result('completed', { files_changed: ['a', 'b', 'c', 'd', 'e'] }), 'info',
      /5 files changed \(a, b, c and 2 more\)/],
  ];
  for (const [name, input, severity, pattern] of cases) {
    it(name, () => {
      const verdict = verdictOf(input);
      assert.equal(verdict.severity, severity);
      assert.match(verdict.text, pattern);
    });
  }

  it('an unverified verdict never says completed', () => {
    assert.ok(!verdictOf(result('unverified')).text.includes('completed'));
  });
});

describe('isRunResult', () => {
  it('accepts the result object and rejects anything else', () => {
    assert.ok(isRunResult(result('completed')));
    assert.ok(!isRunResult({ run_id: 'r', status: 'done' }));
    assert.ok(!isRunResult(null));
    assert.ok(!isRunResult([]));
  });
});
