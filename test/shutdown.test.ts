// SIGTERM while requests are under way, on the server as a process of its own: the requests in flight
// finish, every connection closes, the database closes and the process exits 0 long before the 15 s forced
// exit (which exits 1). Raw sockets, so the test decides when each byte arrives and a connection stays open
// for as long as the server lets it (as a keep-alive client, an undici pool, would).
import { mkdtempSync, rmSync } from 'node:fs';
import { connect as netConnect, type Socket } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestDatabase, TEST_SERVER_URL, type TestDatabase } from './helpers/db.js';
import { killServerProcesses, type ServerProcess, startServerProcess } from './helpers/server-process.js';

const OPERATOR_TOKEN = 'op_shutdown_test_token_0123456789';
const dataDir = mkdtempSync(join(tmpdir(), 'atrium-shutdown-'));
let testDb: TestDatabase | undefined;

beforeAll(async () => {
  // On the PostgreSQL server run, the server gets a fresh database of its own.
  if (TEST_SERVER_URL) testDb = await createTestDatabase();
});

afterAll(async () => {
  killServerProcesses();
  await testDb?.drop();
  rmSync(dataDir, { recursive: true, force: true });
});

const start = () =>
  startServerProcess({
    ATRIUM_DATA_DIR: dataDir,
    DATABASE_URL: testDb?.url,
    ATRIUM_SEED_DEMO: 'off',
    ATRIUM_OPERATOR_TOKEN: OPERATOR_TOKEN,
  });

interface RawResponse {
  status: number;
  headers: Record<string, string>;
  body: string;
}

/** A connection with the server, read one HTTP/1.1 response at a time (bodies with Content-Length). */
async function openConnection(port: number): Promise<{
  socket: Socket;
  next(): Promise<RawResponse>;
  /** Resolves when the server has closed the connection. */
  closed: Promise<void>;
}> {
  const socket = netConnect(port, '127.0.0.1');
  await new Promise<void>((resolve, reject) => {
    socket.once('connect', resolve);
    socket.once('error', reject);
  });
  socket.on('error', () => undefined);
  const closed = new Promise<void>((resolve) => socket.once('close', () => resolve()));
  let buffer = Buffer.alloc(0);
  let waiting: { resolve: (res: RawResponse) => void; reject: (err: Error) => void } | undefined;
  const parse = (): RawResponse | undefined => {
    const end = buffer.indexOf('\r\n\r\n');
    if (end < 0) return undefined;
    const [statusLine, ...lines] = buffer.subarray(0, end).toString('latin1').split('\r\n');
    const headers: Record<string, string> = {};
    for (const line of lines) {
      const colon = line.indexOf(':');
      headers[line.slice(0, colon).trim().toLowerCase()] = line.slice(colon + 1).trim();
    }
    const length = Number(headers['content-length'] ?? 0);
    if (buffer.length < end + 4 + length) return undefined;
    const body = buffer.subarray(end + 4, end + 4 + length).toString('utf8');
    buffer = buffer.subarray(end + 4 + length);
    return { status: Number(statusLine.split(' ')[1]), headers, body };
  };
  const deliver = () => {
    if (!waiting) return;
    const res = parse();
    if (res) {
      const { resolve } = waiting;
      waiting = undefined;
      resolve(res);
    }
  };
  socket.on('data', (chunk: Buffer) => {
    buffer = Buffer.concat([buffer, chunk]);
    deliver();
  });
  socket.on('close', () => waiting?.reject(new Error(`connection closed; unread: ${buffer.toString('latin1')}`)));
  return {
    socket,
    next: () =>
      new Promise<RawResponse>((resolve, reject) => {
        waiting = { resolve, reject };
        deliver();
      }),
    closed,
  };
}

/** Resolves once the server no longer accepts connections (its listener is closed: closing has begun). */
async function listenerClosed(port: number): Promise<void> {
  const deadline = Date.now() + 60_000;
  for (;;) {
    const refused = await new Promise<boolean>((resolve) => {
      const probe = netConnect(port, '127.0.0.1');
      probe.once('connect', () => {
        probe.destroy();
        resolve(false);
      });
      probe.once('error', () => resolve(true));
    });
    if (refused) return;
    if (Date.now() > deadline) throw new Error('the server still accepts connections');
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

async function stopped(server: ServerProcess): Promise<number | null> {
  const code = await server.exited;
  expect.soft(server.output()).not.toContain('shutdown took over');
  return code;
}

describe('SIGTERM under load', () => {
  it('finishes a POST in flight, answers it with Connection: close, closes the connection and exits 0', async () => {
    const server = await start();
    const connection = await openConnection(server.port);
    const body = JSON.stringify({ name: 'Shutdown Test Care' });
    const half = Math.floor(body.length / 2);
    connection.socket.write(
      [
        'POST /api/v1/operator/organizations HTTP/1.1',
        'Host: 127.0.0.1',
        `Authorization: Bearer ${OPERATOR_TOKEN}`,
        'Content-Type: application/json',
        `Content-Length: ${Buffer.byteLength(body)}`,
        // The 100 says the server has the request: it is in flight from here on.
        'Expect: 100-continue',
        '',
        '',
      ].join('\r\n'),
    );
    expect((await connection.next()).status).toBe(100);
    connection.socket.write(body.slice(0, half));

    server.child.kill('SIGTERM');
    await listenerClosed(server.port);
    connection.socket.write(body.slice(half));
    const res = await connection.next();
    expect(res.status, res.body).toBe(201);
    expect.soft(res.headers.connection).toBe('close');
    // The client keeps the connection open: the server is the one to close it.
    await connection.closed;
    expect(await stopped(server)).toBe(0);
  }, 180_000);

  it('closes a connection that never sends a request (a browser preconnects) and exits 0', async () => {
    const server = await start();
    const connection = await openConnection(server.port);
    // A request on another connection opened after it is answered: the server has accepted the first one.
    const later = await openConnection(server.port);
    later.socket.write('GET /livez HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n');
    expect((await later.next()).status).toBe(200);

    server.child.kill('SIGTERM');
    await connection.closed;
    expect(await stopped(server)).toBe(0);
  }, 180_000);

  it('answers a request that arrives while closing with a 503 unavailable problem, Retry-After and its request id', async () => {
    const server = await start();
    const connection = await openConnection(server.port);
    // The request begins before the signal (the server reads it: the connection is not idle) ...
    connection.socket.write('GET /api/v1/me HTTP/1.1\r\nHost: 127.0.0.1\r\n');
    server.child.kill('SIGTERM');
    await listenerClosed(server.port);
    // ... and arrives whole once the server is closing.
    connection.socket.write('X-Request-Id: req-during-shutdown\r\n\r\n');
    const res = await connection.next();
    expect(res.status, res.body).toBe(503);
    expect(res.headers['content-type']).toBe('application/problem+json; charset=utf-8');
    expect(Number(res.headers['retry-after'])).toBeGreaterThan(0);
    expect(res.headers['x-request-id']).toBe('req-during-shutdown');
    expect(res.headers.connection).toBe('close');
    expect(JSON.parse(res.body)).toMatchObject({
      status: 503,
      code: 'unavailable',
      title: 'Service Unavailable',
      requestId: 'req-during-shutdown',
      detail: expect.stringMatching(/shutting down/),
    });
    await connection.closed;
    expect(await stopped(server)).toBe(0);
  }, 180_000);
});
