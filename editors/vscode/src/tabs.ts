/**
 * The rule that keeps a tab's "unsaved" mark truthful after a run.
 * Pure: no `vscode` import.
 *
 * The server writes every edit to disk right after the editor applied it to the buffer, and for an
 * open document it writes what the buffer holds (typing you had not saved included). So after a run,
 * a document the run changed whose text is exactly what is on disk is in fact saved: the extension
 * saves it, which writes nothing new and clears the mark. A document whose text differs from disk
 * (you typed in it after the agent's last write) keeps its mark.
 */

const BOM = '\ufeff';

/** Text with one line ending (`\n`) and no BOM, for comparing what a buffer and a file say. */
export function normalized(text: string): string {
  return (text.startsWith(BOM) ? text.slice(1) : text).replace(/\r\n/g, '\n');
}

/** True when the file's bytes (UTF-8) hold exactly the buffer's text, whatever the line endings or BOM. */
export function diskHoldsBuffer(disk: Uint8Array, buffer: string): boolean {
  let text: string;
  try {
    text = new TextDecoder('utf-8', { fatal: true }).decode(disk);
  } catch {
    return false;
  }
  return normalized(text) === normalized(buffer);
}

/** The workspace-relative paths a run changed, without duplicates or empty entries. */
export function changedPaths(filesChanged: unknown): string[] {
  if (!Array.isArray(filesChanged)) {
    return [];
  }
  return [...new Set(filesChanged.filter((path): path is string => typeof path === 'string' && path !== ''))];
}
