// The embedded database's files, flushed to the disk when PostgreSQL asks.
//
// PGlite keeps a data directory through Emscripten's NODEFS, whose streams have no `fsync`: every
// fsync PostgreSQL makes (the WAL at each commit, the data files at a checkpoint) returned at once,
// so a commit was in the operating system's cache only, and a power cut or a crash of the machine
// could take it away. Here the stream gets the real call, PostgreSQL runs with fsync on and flushes
// the WAL with fsync (`fdatasync` stays a no-op in Emscripten), and a data directory created by a
// worker thread is flushed once, file by file, before it is used.
import { fsyncSync } from 'node:fs';
import type { PGlite } from '@electric-sql/pglite';
import { NodeFS } from '@electric-sql/pglite/nodefs';
import type { FlushFd } from '../durable-files.js';

type Init = Awaited<ReturnType<NodeFS['init']>>;

interface NodeFsStream {
  nfd: number;
}

export class DurableNodeFS extends NodeFS {
  constructor(
    dataDir: string,
    private readonly flush: FlushFd = fsyncSync,
  ) {
    super(dataDir);
  }

  override async init(pg: PGlite, opts: Parameters<NodeFS['init']>[1]): Promise<Init> {
    const made = await super.init(pg, opts);
    const flush = this.flush;
    const preRun = made.emscriptenOpts.preRun ?? [];
    made.emscriptenOpts.preRun = [
      (mod) => {
        const streamOps = (mod.NODEFS as unknown as { stream_ops: { fsync?: (stream: NodeFsStream) => number } })
          .stream_ops;
        streamOps.fsync = (stream) => {
          flush(stream.nfd);
          return 0;
        };
      },
      ...preRun,
    ];
    return made;
  }
}
