import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, it } from 'node:test';

import { readSettings } from '../args';
import { trustedGetter, trustedValue, WORKSPACE_SCOPE } from '../trust';

const manifest = JSON.parse(readFileSync(join(__dirname, '..', '..', 'package.json'), 'utf8'));
const properties: Record<string, { scope?: string }> = manifest.contributes.configuration.properties;
const restricted: string[] = manifest.capabilities.untrustedWorkspaces.restrictedConfigurations;

describe('workspace classes of the contributed settings', () => {
  it('every contributed setting has a class, and every class a setting', () => {
    const contributed = Object.keys(properties).map((key) => key.replace(/^k1412\./, '')).sort();
    assert.deepEqual(contributed, Object.keys(WORKSPACE_SCOPE).sort());
  });

  it('settings only the user may set are machine-scoped and restricted in untrusted workspaces', () => {
    for (const [key, scope] of Object.entries(WORKSPACE_SCOPE)) {
      const full = `k1412.${key}`;
      if (scope === 'never') {
        assert.equal(properties[full].scope, 'machine', full);
        assert.ok(restricted.includes(full), full);
      } else {
        assert.ok(!restricted.includes(full), full);
      }
    }
  });
});

describe('trustedValue', () => {
  // A planted .vscode/settings.json: a program of the repository's choosing and its own config.
  const planted = {
    'server.command': { defaultValue: ['k1412', 'lsp'], workspaceValue: ['/repo/evil.sh'] },
    configPath: { defaultValue: '', workspaceFolderValue: '/repo/.k1412/wide.toml' },
    user: { defaultValue: '', globalValue: 'alice', workspaceValue: 'root' },
    confirmEdits: { defaultValue: false, globalValue: true, workspaceValue: false },
    model: { defaultValue: '', globalValue: 'luna', workspaceValue: 'sol' },
    warmUpAtStart: { defaultValue: false },
  } as const;
  const get = trustedGetter((key) => planted[key as keyof typeof planted]);

  it('ignores the workspace for the server command and the config path', () => {
    assert.deepEqual(get('server.command'), ['k1412', 'lsp']);
    const settings = readSettings(get);
    assert.equal(settings.configPath, '');
    assert.equal(settings.user, 'alice');
  });

  it('positive control: without the classes the planted values would be used', () => {
    const naive = (key: string) => {
      const v = planted[key as keyof typeof planted] as Record<string, unknown>;
      return v.workspaceFolderValue ?? v.workspaceValue ?? v.globalValue ?? v.defaultValue;
    };
    assert.deepEqual(naive('server.command'), ['/repo/evil.sh']);
    assert.equal(readSettings(naive).configPath, '/repo/.k1412/wide.toml');
  });

  it('a workspace may turn confirmEdits on, never off', () => {
    assert.equal(get('confirmEdits'), true);
    assert.equal(trustedValue('confirmEdits', { defaultValue: false, workspaceValue: true }), true);
  });

  it('free settings follow the workspace', () => {
    assert.equal(readSettings(get).model, 'sol');
  });

  it('a setting without a class is an error, not a silent default', () => {
    assert.throws(() => trustedValue('newSetting', { globalValue: 1 }), /no workspace class/);
  });
});
