/**
 * Which `k1412` settings a workspace (`.vscode/settings.json`) may set: a workspace may only restrict.
 *
 * One class per contributed setting (docs/configuration.md has the table):
 * - `never`: read only from the user's own settings (`inspect().globalValue`); these name a program,
 *   a configuration file or whose approvals apply, and are machine-scoped in package.json;
 * - `restrict`: a switch whose `true` is stricter; on when the user or the workspace turns it on;
 * - `free`: harmless; the workspace value wins as usual.
 */

export type WorkspaceScope = 'never' | 'restrict' | 'free';

export const WORKSPACE_SCOPE: Readonly<Record<string, WorkspaceScope>> = {
  model: 'free',
  configPath: 'never',
  user: 'never',
  confirmEdits: 'restrict',
  warmUpAtStart: 'free',
  'server.command': 'never',
  'trace.server': 'free',
};

/** The parts of `WorkspaceConfiguration.inspect()` this module reads. */
export interface Inspected {
  defaultValue?: unknown;
  globalValue?: unknown;
  workspaceValue?: unknown;
  workspaceFolderValue?: unknown;
}

/** The value of `k1412.<key>` a workspace cannot widen. */
export function trustedValue(key: string, inspected: Inspected | undefined): unknown {
  const scope = WORKSPACE_SCOPE[key];
  if (scope === undefined) {
    throw new Error(`The setting k1412.${key} has no workspace class in editors/vscode/src/trust.ts.`);
  }
  if (inspected === undefined) {
    return undefined;
  }
  const user = inspected.globalValue ?? inspected.defaultValue;
  if (scope === 'never') {
    return user;
  }
  const workspace = inspected.workspaceFolderValue ?? inspected.workspaceValue;
  if (scope === 'restrict') {
    return user === true || workspace === true;
  }
  return workspace ?? user;
}

/** A settings getter (for readSettings) that applies the classes above to `inspect()`. */
export function trustedGetter(inspect: (key: string) => Inspected | undefined): (key: string) => unknown {
  return (key) => trustedValue(key, inspect(key));
}
