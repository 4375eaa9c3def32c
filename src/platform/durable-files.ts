// Files on the disk before a function returns: for what must survive a power cut or a crash of the
// machine, not only of the process (the operating system's cache is not the disk).
//
// A durable write, in either flavour: make the folder (and any missing above it), write a temporary
// file beside the target and flush it, rename it into place (so a crash never leaves half a file),
// flush the folder (the new name), and for each folder it had to make, flush that folder's parent
// (the folder's own name). The synchronous one is for start-up (the development key); the object
// store's `put` uses the asynchronous one.
import { randomBytes } from 'node:crypto';
import { closeSync, fsyncSync, mkdirSync, openSync, readdirSync, renameSync, statSync, writeSync } from 'node:fs';
import * as fsAsync from 'node:fs/promises';
import { dirname, join, resolve } from 'node:path';

/** Flushes one open file descriptor to the disk (injectable for tests). */
export type FlushFd = (fd: number) => void;

/** The file operations the asynchronous write uses (a test records their order). */
export type AsyncFiles = Pick<typeof fsAsync, 'mkdir' | 'open' | 'rename'>;

/**
 * The folders to flush after `file` was renamed into place: its own, then, when `made` (the first
 * folder a recursive mkdir made) is set, the parent of every folder from the file's up to `made`.
 */
function foldersToFlush(file: string, made: string | undefined): string[] {
  const folders = [dirname(file)];
  if (made) {
    for (let folder = dirname(file); ; folder = dirname(folder)) {
      folders.push(dirname(folder));
      if (folder === resolve(made)) break;
    }
  }
  return folders;
}

const temporaryBeside = (file: string) => join(dirname(file), `.tmp-${randomBytes(6).toString('hex')}`);

function flushSync(path: string, flush: FlushFd): void {
  const fd = openSync(path, 'r');
  try {
    flush(fd);
  } finally {
    closeSync(fd);
  }
}

/** Flushes every file and folder under `path` to the disk (a data directory made without fsync). */
export function flushTree(path: string, flush: FlushFd = fsyncSync): void {
  if (statSync(path).isDirectory()) for (const name of readdirSync(path)) flushTree(join(path, name), flush);
  flushSync(path, flush);
}

/** Writes a small file durably (see above), synchronously: for start-up, e.g. the development key. */
export function writeFileDurably(path: string, data: string, mode: number, flush: FlushFd = fsyncSync): void {
  const made = mkdirSync(dirname(path), { recursive: true });
  const temporary = temporaryBeside(path);
  const fd = openSync(temporary, 'wx', mode);
  try {
    writeSync(fd, data);
    flush(fd);
  } finally {
    closeSync(fd);
  }
  renameSync(temporary, path);
  for (const folder of foldersToFlush(path, made)) flushSync(folder, flush);
}

/** Opens a file or folder, lets `write` write to it, and flushes it to the disk before closing. */
async function flushed(
  files: AsyncFiles,
  path: string,
  flags: string,
  write?: (handle: fsAsync.FileHandle) => Promise<void>,
): Promise<void> {
  const handle = await files.open(path, flags);
  try {
    await write?.(handle);
    await handle.sync();
  } finally {
    await handle.close();
  }
}

/** Writes a file durably (see above), without blocking the event loop: the object store's `put`. */
export async function putFileDurably(path: string, body: Buffer, files: AsyncFiles = fsAsync): Promise<void> {
  const made = await files.mkdir(dirname(path), { recursive: true });
  const temporary = temporaryBeside(path);
  await flushed(files, temporary, 'wx', (handle) => handle.writeFile(body));
  await files.rename(temporary, path);
  for (const folder of foldersToFlush(path, made)) await flushed(files, folder, 'r');
}
