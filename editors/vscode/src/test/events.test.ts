import assert from 'node:assert/strict';
import { describe, it } from 'node:test';

import { K1412Event, evidenceOf, evidenceText, isK1412Event, renderEvent } from '../events';

function event(type: string, payload: Record<string, unknown>, extra: Partial<K1412Event> = {}): K1412Event {
  return {
    run_id: 'r-1', seq: 4, ts: '2026-11-29T17:00:05.123Z', type, user: 'alice', conversation: null, depth: 0,
    agent_id: null, meta: { policy: 'agent-loop-v4' }, payload, ...extra,
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
    ['command with its exit code, as the server sends it',
      event('tool.completed', { tool: 'run_command', ok: true, args: { command: 'pytest -q' }, run_ms: 812,
        facts: { kind: 'exec', exit_code: 0 } }),
      '17:00:05 #4 tool.completed run_command pytest -q ok exit 0 (812 ms)'],
    ['context summary, not the raw payload', event('context.built', { messages: 2, dropped: 3, tools: ['a', 'b'],
      policy: 'recent-visible-v1', verification: { required: [], satisfied: [], missing: [] } }),
      '17:00:05 #4 context.built 2 messages, 3 older dropped, 2 tools · no evidence required'],
    ['final answer', event('model.responded', { iteration: 4, ok: true, tool_calls: [] }),
      '17:00:05 #4 model.responded iteration 4 · answered'],
    ['write arguments show sizes, never bodies',
      event('tool.started', { tool: 'write_file', args: { path: 'a.py', content: { bytes: 12, sha256: 'ab' } } }),
      '17:00:05 #4 tool.started write_file path="a.py" content={"bytes":12,"sha256":"ab"}'],
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
    ['model turn names the tools it called', event('model.responded', { iteration: 1, ok: true,
      tool_calls: [{ id: 'c1', name: 'patch_file' }, { id: 'c2', name: 'read_file' }] }),
      '17:00:05 #4 model.responded iteration 1 · → patch_file, read_file'],
    ['model error', event('model.responded', { iteration: 3, ok: false, error: 'HTTP 500' }),
      '17:00:05 #4 model.responded iteration 3 · error: HTTP 500'],
    ['model request carries the verification state', event('model.requested', { iteration: 2, model: 'sol',
      verification: { required: ['artifact'], satisfied: [], missing: ['artifact'] } }),
      '17:00:05 #4 model.requested iteration 2 · sol · evidence 0/1, missing: artifact'],
    ['unverified end', event('run.unverified', { status: 'unverified', message: 'Not verified: execution.',
      evidence: { required: ['execution'], satisfied: [], missing: ['execution'] } }),
      '17:00:05 #4 run.unverified unverified: Not verified: execution. · evidence 0/1, missing: execution'],
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
