// A real local HTTPS server that records what it receives: the stand-in for a customer's
// webhook endpoint or custom-skill server. Its certificate comes from the test CA in
// test/fixtures/tls (trusted when the suite runs with NODE_EXTRA_CA_CERTS=test/fixtures/tls/ca.pem).
import { readFileSync } from 'node:fs';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { createServer } from 'node:https';
import type { AddressInfo } from 'node:net';

export interface ReceivedRequest {
  method: string;
  /** Path and query string, as sent. */
  path: string;
  /** Lower-case names; repeated headers joined with ', '. */
  headers: Record<string, string>;
  body: string;
  receivedAt: Date;
  /** The client's source port: equal ports mean a reused keep-alive connection. */
  remotePort: number;
}

export interface ReceiverResponse {
  status?: number;
  /** Wait this long before answering (the request is recorded at once). */
  delayMs?: number;
  headers?: Record<string, string>;
  body?: string | Buffer;
}

/** Returns the response to send, or undefined when it has written to `res` itself. */
export type ReceiverHandler = (
  req: ReceivedRequest,
  res: ServerResponse,
) => ReceiverResponse | undefined | Promise<ReceiverResponse | undefined>;

export interface HttpsReceiverOptions {
  /** Listen address, default 127.0.0.1 (the leaf certificate also covers ::1 and localhost). */
  host?: string;
  /** Default 0: any free port. */
  port?: number;
  /** 'untrusted' serves a certificate from a CA nobody trusts, for TLS-failure tests. */
  tls?: 'trusted' | 'untrusted';
  /** Initial response; default 200 with body 'ok'. */
  response?: ReceiverResponse | ReceiverHandler;
}

export interface HttpsReceiver {
  /** Base URL without a trailing slash, e.g. https://127.0.0.1:43121 (append any path). */
  url: string;
  port: number;
  /** Every request received so far, in arrival order (a live array). */
  requests: ReceivedRequest[];
  respondWith(response: ReceiverResponse | ReceiverHandler): void;
  /** Resolves with `requests` once at least n have arrived; rejects after timeoutMs. */
  waitFor(n: number, timeoutMs?: number): Promise<ReceivedRequest[]>;
  close(): Promise<void>;
}

const TLS_DIR = new URL('../fixtures/tls/', import.meta.url);
const fixture = (name: string) => readFileSync(new URL(name, TLS_DIR));

export async function startHttpsReceiver(opts: HttpsReceiverOptions = {}): Promise<HttpsReceiver> {
  const leaf = opts.tls === 'untrusted' ? 'untrusted-localhost' : 'localhost';
  const requests: ReceivedRequest[] = [];
  const waiters = new Set<() => void>();
  const timers = new Set<NodeJS.Timeout>();
  let response: ReceiverResponse | ReceiverHandler = opts.response ?? { status: 200, body: 'ok' };

  const sleep = (ms: number) =>
    new Promise<void>((resolve) => {
      const timer = setTimeout(() => {
        timers.delete(timer);
        resolve();
      }, ms);
      timers.add(timer);
    });

  const handle = async (req: IncomingMessage, res: ServerResponse) => {
    const received: ReceivedRequest = {
      method: req.method ?? '',
      path: req.url ?? '',
      headers: flattenHeaders(req),
      body: await readBody(req),
      receivedAt: new Date(),
      remotePort: req.socket.remotePort ?? 0,
    };
    requests.push(received);
    for (const wake of waiters) wake();

    const planned = typeof response === 'function' ? await response(received, res) : response;
    if (!planned) return;
    if (planned.delayMs) await sleep(planned.delayMs);
    if (res.destroyed) return;
    res.writeHead(planned.status ?? 200, planned.headers);
    res.end(planned.body ?? '');
  };

  const server = createServer({ key: fixture(`${leaf}-key.pem`), cert: fixture(`${leaf}.pem`) }, (req, res) => {
    handle(req, res).catch((err: unknown) => {
      if (res.headersSent || res.destroyed) return res.destroy();
      res.writeHead(500).end(String(err));
    });
  });
  // Handshake failures are the point of the untrusted variant; keep them out of the output.
  server.on('tlsClientError', () => undefined);

  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(opts.port ?? 0, opts.host ?? '127.0.0.1', () => resolve());
  });
  const { address, port } = server.address() as AddressInfo;
  const host = address.includes(':') ? `[${address}]` : address;

  return {
    url: `https://${host}:${port}`,
    port,
    requests,
    respondWith(next) {
      response = next;
    },
    waitFor(n, timeoutMs = 5000) {
      return new Promise((resolve, reject) => {
        const check = () => {
          if (requests.length < n) return;
          cleanup();
          resolve(requests);
        };
        const timer = setTimeout(() => {
          cleanup();
          reject(new Error(`Expected ${n} request(s) within ${timeoutMs} ms, got ${requests.length}`));
        }, timeoutMs);
        const cleanup = () => {
          clearTimeout(timer);
          waiters.delete(check);
        };
        waiters.add(check);
        check();
      });
    },
    async close() {
      for (const timer of timers) clearTimeout(timer);
      timers.clear();
      await new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      });
    },
  };
}

async function readBody(req: IncomingMessage): Promise<string> {
  const chunks: Buffer[] = [];
  for await (const chunk of req) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks).toString('utf8');
}

function flattenHeaders(req: IncomingMessage): Record<string, string> {
  const flat: Record<string, string> = {};
  for (const [name, value] of Object.entries(req.headers)) {
    if (value !== undefined) flat[name] = Array.isArray(value) ? value.join(', ') : value;
  }
  return flat;
}
