import assert from 'node:assert/strict';
import { describe, it } from 'node:test';

import { K1412Event, evidenceOf, evidenceText, isK1412Event, renderEvent } from '../events';

function event(type: string, payload: Record<string, unknown>, extra: Partial<K1412Event> = {}): K1412Event {
  return {
    run_id: 'r-1', seq: 4, ts: '2026-11-29T17:00:05.123Z', type, user: 'alice', conversation: null, depth: 0,
    agent_id: null, meta: { policy: 'agent-loop-v3' }, payload, ...extra,
  };
}

describe('renderEvent', () => {
  const cases: Array<[string, K1412Event, string]> = [
    ['run start with task and model', event('run.created', { task: 'Change x to 2', model: 'sol' }),
      '17:00:05 #4 run.created task "Change x to 2" · model sol'],
    ['tool call with its public arguments', event('tool.started', { tool: 'read_file', arguments: { path: 'app.py', start_line: 2 } }),
      '17:00:05 #4 tool.started read_file path="app.py" start_line=2'],
    ['tool success with duration', event('tool.completed', { name: 'run_command', ok: true, duration_ms: 31 }),
      '17:00:05 #4 tool.completed run_command ok (31 ms)'],
    ['tool failure with its error', event('tool.completed', { tool: 'patch_file', ok: false, error: 'old_text not found; re-read the file.' }),
      '17:00:05 #4 tool.completed patch_file failed: old_text not found; re-read the file.'],
    ['rejected completion names the missing evidence',
      event('completion.rejected', { evidence: { required: ['artifact', 'execution'], satisfied: ['artifact'], missing: ['execution'] } }),
      '17:00:05 #4 completion.rejected evidence 1/2, missing: execution'],
    ['verified end', event('run.completed', { status: 'completed', required: ['artifact'], satisfied: ['artifact'], missing: [] }),
      '17:00:05 #4 run.completed completed · evidence 1/1 ✓'],
    ['failure reason', event('run.failed', { error: 'the provider refused the key' }),
      '17:00:05 #4 run.failed failed: the provider refused the key'],
    ['sub-agent events are indented and named', event('tool.started', { tool: 'read_file', arguments: { path: 'a.py' } }, { depth: 1, agent_id: 'a1' }),
      '17:00:05 #4   [a1] tool.started read_file path="a.py"'],
    ['model turn', event('model.responded', { iteration: 2, tool_calls: [{}, {}] }),
      '17:00:05 #4 model.responded iteration 2 · 2 tool calls'],
    ['unknown type shows its payload', event('plan.updated', { items: 3 }), '17:00:05 #4 plan.updated {"items":3}'],
    ['empty payload', event('context.built', {}), '17:00:05 #4 context.built'],
  ];
  for (const [name, input, expected] of cases) {
    it(name, () => assert.equal(renderEvent(input), expected));
  }

  it('keeps a line short when an argument is long or multi-line', () => {
    const line = renderEvent(event('tool.started', { tool: 'run_command', arguments: { command: `echo ${'x'.repeat(500)}\nls` } }));
    assert.ok(line.length < 120, line);
    assert.ok(!line.includes('\n'));
    assert.ok(line.includes('…'));
  });
});

describe('evidence', () => {
  it('reads nested or top-level evidence and ignores payloads without it', () => {
    assert.deepEqual(evidenceOf({ evidence: { required: ['report'], satisfied: [], missing: ['report'] } }),
      { required: ['report'], satisfied: [], missing: ['report'] });
    assert.deepEqual(evidenceOf({ missing: ['execution'] }), { required: [], satisfied: [], missing: ['execution'] });
    assert.equal(evidenceOf({ ok: true }), undefined);
    assert.equal(evidenceOf(null), undefined);
  });

  it('words the verification state', () => {
    assert.equal(evidenceText({ required: [], satisfied: [], missing: [] }), 'no evidence required');
    assert.equal(evidenceText({ required: ['artifact', 'execution'], satisfied: ['artifact', 'execution'], missing: [] }), 'evidence 2/2 ✓');
  });

  it('recognises events and rejects other notifications', () => {
    assert.ok(isK1412Event(event('run.created', {})));
    assert.ok(!isK1412Event({ run_id: 'r', type: 'x' }));
    assert.ok(!isK1412Event('run.created'));
  });
});
