import assert from 'node:assert/strict';
import { describe, it } from 'node:test';

import { K1412Event } from '../events';
import { RunResult } from '../result';
import { RunTracker, progressMessage, statusText } from '../runState';

let seq = 0;
function event(runId: string, type: string, payload: Record<string, unknown> = {}, depth = 0): K1412Event {
  seq += 1;
  return {
    run_id: runId, seq, ts: '2026-11-29T17:00:00.000Z', type, user: 'u', conversation: null, depth,
    agent_id: depth > 0 ? 'a1' : null, meta: {}, payload,
  };
}

function result(runId: string, status: RunResult['status']): RunResult {
  return {
    run_id: runId, status, message: '', evidence: { required: ['artifact'], satisfied: [], missing: ['artifact'] },
    files_changed: [], iterations: 1, usage: {}, events_path: '/tmp/r.jsonl',
  };
}

describe('RunTracker', () => {
  it('hands new root runs to waiting requests in order', () => {
    const tracker = new RunTracker();
    const got: string[] = [];
    tracker.claimNextRun((id) => got.push(`first:${id}`));
    tracker.claimNextRun((id) => got.push(`second:${id}`));
    tracker.apply(event('r1', 'run.created', { task: 'a' }));
    tracker.apply(event('r1', 'tool.started', { tool: 'read_file' }));
    tracker.apply(event('r2', 'run.created', { task: 'b' }));
    tracker.apply(event('r3', 'run.created', { task: 'c' }));
    assert.deepEqual(got, ['first:r1', 'second:r2']);
  });

  it('a request that stopped waiting claims nothing', () => {
    const tracker = new RunTracker();
    const got: string[] = [];
    const stop = tracker.claimNextRun((id) => got.push(id));
    stop();
    tracker.apply(event('r1', 'run.created'));
    assert.deepEqual(got, []);
  });

  it('follows a run from start to its verdict', () => {
    const tracker = new RunTracker();
    tracker.apply(event('r1', 'run.created', { task: 'Change x' }));
    tracker.apply(event('r1', 'tool.started', { tool: 'patch_file' }));
    tracker.apply(event('r1', 'tool.completed', { tool: 'patch_file', ok: true,
      evidence: { required: ['artifact'], satisfied: [], missing: ['artifact'] } }));
    let view = tracker.get('r1')!;
    assert.equal(view.status, 'running');
    assert.equal(view.task, 'Change x');
    assert.equal(view.toolCalls, 1);
    assert.deepEqual(tracker.active().map((v) => v.runId), ['r1']);
    view = tracker.apply(event('r1', 'run.completed', { status: 'completed' }));
    assert.equal(view.status, 'completed');
    assert.deepEqual(tracker.active(), []);
  });

  it('never turns an unverified run into a completed one', () => {
    const tracker = new RunTracker();
    tracker.apply(event('r1', 'run.created'));
    tracker.apply(event('r1', 'completion.unverified', { missing: ['execution'] }));
    const view = tracker.apply(event('r1', 'run.completed', {}));
    assert.equal(view.status, 'unverified');
  });

  it('sub-agent events do not end the root run', () => {
    const tracker = new RunTracker();
    tracker.apply(event('r1', 'run.created'));
    const view = tracker.apply(event('r1', 'run.completed', { status: 'completed' }, 1));
    assert.equal(view.status, 'running');
    assert.match(view.activity, /^sub-agent a1: run\.completed/);
  });

  const endings: Array<[string, RunResult['status']]> = [
    ['run.failed', 'failed'], ['run.cancelled', 'cancelled'], ['completion.unverified', 'unverified'],
    ['run.unverified', 'unverified'],
  ];
  for (const [type, status] of endings) {
    it(`${type} ends the run as ${status}`, () => {
      const tracker = new RunTracker();
      tracker.apply(event('r1', 'run.created'));
      assert.equal(tracker.apply(event('r1', type)).status, status);
    });
  }

  it('the final result is the authority', () => {
    const tracker = new RunTracker();
    tracker.apply(event('r1', 'run.created'));
    const seen: string[] = [];
    tracker.onChange((view) => seen.push(view.status));
    const view = tracker.finish(result('r1', 'unverified'));
    assert.equal(view.status, 'unverified');
    assert.deepEqual(view.evidence?.missing, ['artifact']);
    assert.deepEqual(seen, ['unverified']);
  });
});

describe('statusText', () => {
  it('idle before any run', () => {
    assert.equal(statusText(undefined).text, '$(hubot) K1412');
  });

  it('running shows the verification state and other active runs', () => {
    const tracker = new RunTracker();
    tracker.apply(event('r1', 'run.created', { task: 'Fix the parser' }));
    const view = tracker.apply(event('r1', 'tool.completed', { tool: 'write_file', ok: true,
      evidence: { required: ['artifact', 'execution'], satisfied: ['artifact'], missing: ['execution'] } }));
    const status = statusText(view, 2);
    assert.equal(status.text, '$(sync~spin) K1412: running (+1) · evidence 1/2, missing: execution');
    assert.match(status.tooltip, /Task: Fix the parser/);
    assert.match(status.tooltip, /Verification: evidence 1\/2, missing: execution/);
  });

  const finals: Array<[RunResult['status'], string]> = [
    ['completed', '$(pass) K1412: completed'],
    ['unverified', '$(warning) K1412: unverified'],
    ['failed', '$(error) K1412: failed'],
    ['cancelled', '$(circle-slash) K1412: cancelled'],
  ];
  for (const [status, text] of finals) {
    it(`finished ${status}`, () => {
      const view = new RunTracker().finish(result('r9', status));
      assert.equal(statusText(view).text, text);
    });
  }
});

describe('progressMessage', () => {
  const missing = { required: ['inspection'], satisfied: [], missing: ['inspection: calc.py was never read'] };
  it('names the evidence once when the event already carries it', () => {
    const tracker = new RunTracker();
    const view = tracker.apply(event('r1', 'completion.rejected', { ...missing, reason: 'no inspection' }));
    const message = progressMessage(view);
    assert.equal(message.split('evidence 0/1').length - 1, 1, message);
    assert.equal(message.split('missing:').length - 1, 1, message);
  });
  it('adds the evidence to an activity without it', () => {
    const tracker = new RunTracker();
    tracker.apply(event('r1', 'completion.rejected', missing));
    const view = tracker.apply(event('r1', 'tool.started', { tool: 'read_file', arguments: { path: 'calc.py' } }));
    assert.equal(progressMessage(view),
      'tool.started read_file path="calc.py" · evidence 0/1, missing: inspection: calc.py was never read');
  });
  it('is the bare activity before any evidence is known', () => {
    const view = new RunTracker().apply(event('r1', 'tool.started', { tool: 'read_file', arguments: { path: 'a' } }));
    assert.equal(progressMessage(view), 'tool.started read_file path="a"');
  });
});
