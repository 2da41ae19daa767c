/**
 * Opening a prompt for a task: the server loads its run machinery (k1412.prepare) while the user types,
 * so the first run starts as fast as later ones and an idle server stays small until then.
 * Pure: no `vscode` import, so node's test runner can exercise it.
 */

/** Sends k1412.prepare; undefined when there is no server to send it to. */
export type Prepare = () => PromiseLike<unknown> | undefined;

function describe(err: unknown): string {
  return err instanceof Error ? err.message : String(err);
}

/**
 * Send `prepare` without waiting for its answer, then open the prompt with `ask` and return what it
 * returns. The prompt never waits for the server, and a server that cannot prepare (an older one that
 * does not know the command, one that stopped) changes nothing for the user: the first run then loads
 * the machinery itself. `onError` hears why prepare failed (for the output channel).
 */
export async function askPrepared<T>(prepare: Prepare, ask: () => PromiseLike<T>,
  onError: (reason: string) => void): Promise<T> {
  try {
    const pending = prepare();
    if (pending !== undefined) {
      Promise.resolve(pending).then(undefined, (err: unknown) => onError(describe(err)));
    }
  } catch (err) {
    onError(describe(err));
  }
  return ask();
}
