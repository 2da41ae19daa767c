import assert from 'node:assert/strict';
import { describe, it } from 'node:test';

import { changedPaths, diskHoldsBuffer } from '../tabs';

const bytes = (text: string): Uint8Array => new TextEncoder().encode(text);

describe('diskHoldsBuffer', () => {
  it('is true when the run wrote exactly the buffer', () => {
    assert.equal(diskHoldsBuffer(bytes('x = 2\n# my unsaved line\n'), 'x = 2\n# my unsaved line\n'), true);
  });
  it('ignores CRLF and a BOM the server kept on disk', () => {
    assert.equal(diskHoldsBuffer(bytes('\ufeffx = 2\r\nprint(x)\r\n'), 'x = 2\nprint(x)\n'), true);
  });
  it('is false when the user typed after the last write', () => {
    assert.equal(diskHoldsBuffer(bytes('x = 2\n'), 'x = 2\ny = 3\n'), false);
  });
  it('is false for bytes that are not UTF-8', () => {
    assert.equal(diskHoldsBuffer(new Uint8Array([0xff, 0xfe, 0x00]), ''), false);
  });
});

describe('changedPaths', () => {
  it('keeps each path once and drops junk', () => {
    assert.deepEqual(changedPaths(['app.py', 'app.py', '', 3, 'b/c.py']), ['app.py', 'b/c.py']);
    assert.deepEqual(changedPaths(undefined), []);
  });
});
