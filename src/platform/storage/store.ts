// Object storage: the local disk store under the data dir (`<ATRIUM_DATA_DIR>/objects`) by default.
// Keys are opaque paths of safe segments; `put` is the durable write of platform/durable-files.ts
// (temporary file flushed, renamed into place, folders flushed), so once it resolves the object
// survives a crash or power loss, and a crash never leaves half an object under its key.
import * as fs from 'node:fs/promises';
import { resolve, sep } from 'node:path';
import { type AsyncFiles, putFileDurably } from '../durable-files.js';
import { s3ObjectStore } from './s3.js';

export interface ObjectStore {
  put(key: string, body: Buffer): Promise<void>;
  get(key: string): Promise<Buffer | undefined>;
  delete(key: string): Promise<void>;
}

const SAFE_KEY = /^[A-Za-z0-9][A-Za-z0-9._-]{0,127}(\/[A-Za-z0-9][A-Za-z0-9._-]{0,127}){0,7}$/;

/** The file operations the local store uses (a test records their order). */
export type StoreFiles = AsyncFiles & Pick<typeof fs, 'readFile' | 'rm'>;

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
      await putFileDurably(pathOf(key), body, files);
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
