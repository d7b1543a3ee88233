import { open, rename, rm } from 'node:fs/promises';
import { basename, dirname, join } from 'node:path';

// Files written so that a crash at any moment leaves the old text or the new, never a torn one.

export const tempPrefix = (file: string) => `.${basename(file)}.tmp-`;

/**
 * The first half of writing `file` so that a crash at any moment leaves either the old or the new file,
 * never a torn one: the text in a temp file in the same directory, fsynced; its path is returned.
 * Off the event loop: requests keep being served while it runs.
 */
export async function writeTemp(file: string, text: string, seq: number): Promise<string> {
  const temp = join(dirname(file), `${tempPrefix(file)}${process.pid}-${seq}`);
  const fh = await open(temp, 'w', 0o600);
  try {
    await fh.writeFile(text);
    await fh.sync();
  } catch (err) {
    await fh.close().catch(() => {});
    await rm(temp); // made by the open above
    throw err;
  }
  await fh.close();
  return temp;
}

/**
 * The second half: the temp file renamed over the target (atomic on POSIX within one file system), then
 * the directory fsynced so that the rename itself survives.
 */
export async function commitTemp(temp: string, file: string): Promise<void> {
  try {
    await rename(temp, file);
  } catch (err) {
    await rm(temp); // a failed rename leaves it in place
    throw err;
  }
  try {
    const dh = await open(dirname(file), 'r');
    try {
      await dh.sync();
    } finally {
      await dh.close();
    }
  } catch {
    // Some file systems refuse to fsync a directory; the rename is still atomic there.
  }
}
