// Files on the disk before a function returns: for what must survive a power cut or a crash of the
// machine, not only of the process (the operating system's cache is not the disk).
import { closeSync, fsyncSync, openSync, readdirSync, renameSync, statSync, writeSync } from 'node:fs';
import { dirname, join } from 'node:path';

/** Flushes one open file descriptor to the disk (injectable for tests). */
export type FlushFd = (fd: number) => void;

/** Flushes every file and folder under `path` to the disk (a data directory made without fsync). */
export function flushTree(path: string, flush: FlushFd = fsyncSync): void {
  if (statSync(path).isDirectory()) for (const name of readdirSync(path)) flushTree(join(path, name), flush);
  const fd = openSync(path, 'r');
  try {
    flush(fd);
  } finally {
    closeSync(fd);
  }
}

/**
 * Writes a small file whole or not at all, on the disk before it returns: a temporary file written
 * and flushed, renamed into place, then its folder flushed (for the development key, which the
 * embedded data is encrypted with: a half-written or lost key would make that data unreadable).
 */
export function writeFileDurably(path: string, data: string, mode: number, flush: FlushFd = fsyncSync): void {
  const temporary = `${path}.${process.pid}.tmp`;
  const fd = openSync(temporary, 'w', mode);
  try {
    writeSync(fd, data);
    flush(fd);
  } finally {
    closeSync(fd);
  }
  renameSync(temporary, path);
  const folder = openSync(dirname(path), 'r');
  try {
    flush(folder);
  } finally {
    closeSync(folder);
  }
}
