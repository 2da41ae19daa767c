import assert from 'node:assert/strict';
import { describe, it } from 'node:test';

import { askPrepared } from '../prepare';

describe('askPrepared', () => {
  it('sends prepare before the prompt opens and returns what the user typed', async () => {
    const calls: string[] = [];
    const typed = await askPrepared(
      () => { calls.push('prepare'); return Promise.resolve({ ready: false, warming: true }); },
      () => { calls.push('prompt'); return Promise.resolve('Add a test'); },
      (reason) => calls.push(`error: ${reason}`),
    );
    assert.equal(typed, 'Add a test');
    assert.deepEqual(calls, ['prepare', 'prompt']);
  });

  it('opens the prompt without waiting for the server to answer', async () => {
    let answered = false;
    const never = new Promise<unknown>(() => undefined);
    const typed = await askPrepared(() => never, () => { answered = true; return Promise.resolve(undefined); },
      () => assert.fail('no error expected'));
    assert.equal(answered, true);
    assert.equal(typed, undefined);  // Escape: undefined comes back as it was
  });

  it('still opens the prompt when the server refuses prepare, and reports why', async () => {
    const errors: string[] = [];
    const typed = await askPrepared(() => Promise.reject(new Error('Unhandled method k1412.prepare')),
      () => Promise.resolve('task'), (reason) => errors.push(reason));
    await new Promise((resolve) => setImmediate(resolve));  // let the rejection be heard
    assert.equal(typed, 'task');
    assert.deepEqual(errors, ['Unhandled method k1412.prepare']);
  });

  it('still opens the prompt when there is no server or sending throws', async () => {
    const errors: string[] = [];
    assert.equal(await askPrepared(() => undefined, () => Promise.resolve('a'), (r) => errors.push(r)), 'a');
    assert.equal(await askPrepared(() => { throw new Error('the client is stopping'); }, () => Promise.resolve('b'),
      (r) => errors.push(r)), 'b');
    assert.deepEqual(errors, ['the client is stopping']);
  });
});
