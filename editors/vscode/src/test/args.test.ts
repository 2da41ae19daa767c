import assert from 'node:assert/strict';
import { describe, it } from 'node:test';

import {
  buildDelegateArgs,
  buildRunTaskArgs,
  initializationOptions,
  parseServerCommand,
  readSettings,
  serverEnvironment,
  splitCommandLine,
} from '../args';

describe('serverEnvironment', () => {
  it('starts the server with PYTHONSAFEPATH=1 and the rest of the environment as it is', () => {
    const env = serverEnvironment({ PATH: '/usr/bin', HOME: '/home/u', UNSET: undefined, PYTHONSAFEPATH: '' });
    assert.deepEqual(env, { PATH: '/usr/bin', HOME: '/home/u', PYTHONSAFEPATH: '1' });
  });
});

describe('parseServerCommand', () => {
  const cases: Array<[string, unknown, { command: string; args: string[] }]> = [
    ['unset means the default', undefined, { command: 'k1412', args: ['lsp'] }],
    ['empty string means the default', '', { command: 'k1412', args: ['lsp'] }],
    ['empty array means the default', [], { command: 'k1412', args: ['lsp'] }],
    ['string split on spaces', 'k1412 lsp --tcp 127.0.0.1:2087', { command: 'k1412', args: ['lsp', '--tcp', '127.0.0.1:2087'] }],
    ['quoted path with a space', '"/opt/my tools/k1412" lsp', { command: '/opt/my tools/k1412', args: ['lsp'] }],
    ['array kept as is', ['/venv/bin/python', '-m', 'k1412_ls', 'lsp'], { command: '/venv/bin/python', args: ['-m', 'k1412_ls', 'lsp'] }],
    ['array element with spaces kept whole', ['/opt/my tools/k1412-ls'], { command: '/opt/my tools/k1412-ls', args: [] }],
  ];
  for (const [name, value, expected] of cases) {
    it(name, () => assert.deepEqual(parseServerCommand(value), expected));
  }

  it('refuses a setting of the wrong type with a sentence that names the fix', () => {
    assert.throws(() => parseServerCommand(42), /must be a string or an array of strings/);
    assert.throws(() => parseServerCommand(['k1412', 3]), /must be a string or an array of strings/);
  });

  it('refuses an unclosed quote', () => {
    assert.throws(() => splitCommandLine('"k1412 lsp'), /unclosed " quote/);
  });

  it('keeps an empty quoted argument', () => {
    assert.deepEqual(splitCommandLine('k1412 run ""'), ['k1412', 'run', '']);
  });
});

describe('settings and initializationOptions', () => {
  it('normalises missing and mistyped values', () => {
    const raw: Record<string, unknown> = { model: '  sol ', configPath: 7, confirmEdits: 'yes', warmUpAtStart: 1 };
    assert.deepEqual(readSettings((key) => raw[key]),
      { model: 'sol', configPath: '', user: '', confirmEdits: false, warmUpAtStart: false });
    assert.equal(readSettings((key) => (key === 'warmUpAtStart' ? true : undefined)).warmUpAtStart, true);
  });

  it('leaves empty strings out of initializationOptions and always sends confirmEdits', () => {
    assert.deepEqual(initializationOptions(
      { model: '', configPath: '/c.toml', user: 'alice', confirmEdits: true, warmUpAtStart: false }),
    { confirmEdits: true, configPath: '/c.toml', user: 'alice' });
    assert.deepEqual(initializationOptions({ model: '', configPath: '', user: '', confirmEdits: false, warmUpAtStart: false }),
      { confirmEdits: false });
  });

  it('sends warmUpAtStart only when it is on', () => {
    assert.deepEqual(initializationOptions({ model: '', configPath: '', user: '', confirmEdits: false, warmUpAtStart: true }),
      { confirmEdits: false, warmUpAtStart: true });
  });
});

describe('buildRunTaskArgs', () => {
  it('trims the task and adds only the given options', () => {
    assert.deepEqual(buildRunTaskArgs('  Change x to 2 in app.py \n'), { task: 'Change x to 2 in app.py' });
    assert.deepEqual(buildRunTaskArgs('t', 'sol', 'c-1'), { task: 't', model: 'sol', conversation: 'c-1' });
    assert.deepEqual(buildRunTaskArgs('t', ' ', ''), { task: 't' });
  });

  it('refuses an empty task', () => {
    assert.throws(() => buildRunTaskArgs('   '), /Type a task/);
  });
});

describe('buildDelegateArgs', () => {
  const base = { uri: 'file:///ws/app.py', range: { start: { line: 1, character: 0 }, end: { line: 3, character: 4 } } };

  it('without an instruction keeps the default read-only review', () => {
    assert.deepEqual(buildDelegateArgs(base, '', true), base);
    assert.deepEqual(buildDelegateArgs(base, undefined, true), base);
  });

  it('adds the instruction and the write choice', () => {
    assert.deepEqual(buildDelegateArgs(base, ' add type hints ', true), { ...base, task: 'add type hints', write: true });
    assert.deepEqual(buildDelegateArgs(base, 'explain', false), { ...base, task: 'explain', write: false });
  });

  it('drops unknown fields the action carried', () => {
    const args = buildDelegateArgs({ ...base, extra: 1, range: { ...base.range, junk: true } }, '', false);
    assert.deepEqual(args, base);
  });

  const broken: Array<[string, unknown]> = [
    ['nothing', undefined],
    ['no uri', { range: base.range }],
    ['no range', { uri: base.uri }],
    ['bad position', { uri: base.uri, range: { start: { line: 'a', character: 0 }, end: base.range.end } }],
  ];
  for (const [name, value] of broken) {
    it(`refuses ${name}`, () => assert.throws(() => buildDelegateArgs(value, 'x', false), /select the code again/));
  }
});
