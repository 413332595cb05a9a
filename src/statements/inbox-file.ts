import { constants, type Stats } from 'node:fs';
import { open, type FileHandle } from 'node:fs/promises';
import path from 'node:path';

/** A file an import refuses to read for what it is, not for what it holds; the message names it. */
export class NotARegularFileError extends Error {
  override readonly name = 'NotARegularFileError';
}

/**
 * Opens a file to import, with its stat. With `noFollow` (an inbox, whose files anyone with write
 * access to it places) a symlink is refused instead of followed, so a link cannot make an import
 * read a file outside the inbox, and so is anything but a regular file: a pipe or device swapped in
 * after the scan listed the name is opened non-blocking, so it cannot hang the scan. Those refusals
 * are NotARegularFileError; any other failure is open()'s or stat()'s own error. The statement and
 * the payout report imports both read their files through here.
 */
export async function openFileToImport(file: string, noFollow: boolean): Promise<{ handle: FileHandle; stat: Stats }> {
  const name = path.basename(file);
  let handle: FileHandle;
  try {
    handle = await open(file, noFollow ? constants.O_RDONLY | (constants.O_NOFOLLOW ?? 0) | (constants.O_NONBLOCK ?? 0) : constants.O_RDONLY);
  } catch (error) {
    if (noFollow && (error as NodeJS.ErrnoException).code === 'ELOOP') throw new NotARegularFileError(`${name}: a symlink, not followed`);
    throw error;
  }
  try {
    const stat = await handle.stat();
    if (noFollow && !stat.isFile()) throw new NotARegularFileError(`${name}: not a regular file`);
    return { handle, stat };
  } catch (error) {
    await handle.close();
    throw error;
  }
}
