// Object storage: the local disk store under the data dir (`<ATRIUM_DATA_DIR>/objects`) by default.
// Keys are opaque paths of safe segments; writes go to a temporary file first, reach the disk
// (fsync), and are renamed into place with the folder synced too, so once `put` resolves the object
// survives a crash or power loss, and a crash never leaves half an object under its key.
import { randomBytes } from 'node:crypto';
import * as fs from 'node:fs/promises';
import { dirname, join, resolve, sep } from 'node:path';
import { s3ObjectStore } from './s3.js';

export interface ObjectStore {
  put(key: string, body: Buffer): Promise<void>;
  get(key: string): Promise<Buffer | undefined>;
  delete(key: string): Promise<void>;
}

const SAFE_KEY = /^[A-Za-z0-9][A-Za-z0-9._-]{0,127}(\/[A-Za-z0-9][A-Za-z0-9._-]{0,127}){0,7}$/;

/** The file operations the local store uses (a test records their order). */
export type StoreFiles = Pick<typeof fs, 'mkdir' | 'open' | 'rename' | 'readFile' | 'rm'>;

/** Opens a file or folder, lets `write` write to it, and flushes it to the disk before closing. */
async function flushed(
  files: StoreFiles,
  path: string,
  flags: string,
  write?: (handle: fs.FileHandle) => Promise<void>,
): Promise<void> {
  const handle = await files.open(path, flags);
  try {
    await write?.(handle);
    await handle.sync();
  } finally {
    await handle.close();
  }
}

export function localObjectStore(dataDir: string, files: StoreFiles = fs): ObjectStore {
  const root = resolve(dataDir, 'objects');
  const pathOf = (key: string) => {
    if (!SAFE_KEY.test(key) || key.includes('..')) throw new Error(`Not a storage key: ${key}`);
    const path = resolve(root, key);
    if (!path.startsWith(root + sep)) throw new Error(`Not a storage key: ${key}`);
    return path;
  };
  return {
    async put(key, body) {
      const path = pathOf(key);
      // The first folder it had to make, if any (mkdir answers that for a recursive call).
      const made = await files.mkdir(dirname(path), { recursive: true });
      const temp = join(dirname(path), `.tmp-${randomBytes(6).toString('hex')}`);
      await flushed(files, temp, 'wx', (handle) => handle.writeFile(body));
      await files.rename(temp, path);
      await flushed(files, dirname(path), 'r');
      // A folder made for this object is an entry in its parent: flush those parents too, up to the
      // folder that was already there, or a power cut could lose the folder and the object with it.
      if (made) {
        for (let folder = dirname(path); ; folder = dirname(folder)) {
          await flushed(files, dirname(folder), 'r');
          if (folder === resolve(made)) break;
        }
      }
    },
    async get(key) {
      try {
        return await files.readFile(pathOf(key));
      } catch (err) {
        if ((err as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
        throw err;
      }
    },
    async delete(key) {
      await files.rm(pathOf(key), { force: true });
    },
  };
}

/** The deployment's store: S3 when ATRIUM_S3_* are set, else the local disk store under the data dir. */
export function resolveObjectStore(config: {
  dataDir: string;
  s3?: { endpoint: string; bucket: string; region: string; accessKeyId: string; secretAccessKey: string };
}): { store: ObjectStore; kind: 's3' | 'local' } {
  return config.s3
    ? { store: s3ObjectStore(config.s3), kind: 's3' }
    : { store: localObjectStore(config.dataDir), kind: 'local' };
}
