import { existsSync, readFileSync, statSync } from 'node:fs';
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { AddressInfo, Socket } from 'node:net';
import { dirname, join, relative, resolve, sep } from 'node:path';
import { fileURLToPath } from 'node:url';
import fastifyCookie from '@fastify/cookie';
import fastifyStatic from '@fastify/static';
import fastifySwagger from '@fastify/swagger';
import fastifySwaggerUi from '@fastify/swagger-ui';
import Fastify, { type FastifyInstance, LogController } from 'fastify';
import { serializerCompiler, validatorCompiler } from 'fastify-type-provider-zod';
import type { Config } from './config.js';
import { emulatorRoutes } from './emulators/index.js';
import { MODULES } from './modules/index.js';
import { registerAuthentication } from './platform/auth/authenticate.js';
import { AUTH_CHANNEL, PrincipalCache } from './platform/auth/principal-cache.js';
import type { Database } from './platform/db/client.js';
import { installErrorHandling, sendProblem } from './platform/errors.js';
import {
  clientErrorHandler,
  frameworkErrors,
  REQUEST_ID_PATTERN,
  registerRequestHardening,
  routedPath,
} from './platform/http/hardening.js';
import { documentHeadersAndBodies, routeTransform } from './platform/http/openapi-document.js';
import { documentMediaTypes } from './platform/http/openapi-media.js';
import { registerBodyParsers } from './platform/http/raw-body.js';
import { trustProxyFunction } from './platform/http/trust-proxy.js';
import { registerIdempotency } from './platform/idempotency.js';
import { newId } from './platform/ids.js';
import { safeError } from './platform/log-safety.js';
import { Scheduler } from './platform/scheduler/scheduler.js';
import type { AppDeps } from './platform/types.js';

// ATRIUM_WEB_DIST: serve a web build from elsewhere (tests building in parallel use their own).
const webDist = () => process.env.ATRIUM_WEB_DIST || join(dirname(fileURLToPath(import.meta.url)), '../web/dist');
/** The product version, from package.json (shown in /docs and the OpenAPI document). */
const PRODUCT_VERSION: string = (
  JSON.parse(readFileSync(join(dirname(fileURLToPath(import.meta.url)), '../package.json'), 'utf8')) as {
    version: string;
  }
).version;

function securityHeaders(app: FastifyInstance, config: Config): void {
  const https = (config.publicUrl ?? '').startsWith('https:');
  app.addHook('onSend', async (request, reply, payload) => {
    reply.header('x-request-id', String(request.id));
    reply.header('x-content-type-options', 'nosniff');
    reply.header('referrer-policy', 'no-referrer');
    reply.header('x-frame-options', 'DENY');
    reply.header('cross-origin-opener-policy', 'same-origin');
    if (https) reply.header('strict-transport-security', 'max-age=31536000; includeSubDomains');
    if (!reply.hasHeader('content-security-policy')) {
      const docs = routedPath(request).startsWith('/docs');
      reply.header(
        'content-security-policy',
        docs
          ? "default-src 'self'; img-src 'self' data:; style-src 'self' 'unsafe-inline'; script-src 'self' 'unsafe-inline'"
          : // font-src data: for the calendar's icon font, which FullCalendar's stylesheet embeds as a data: URL.
            "default-src 'self'; img-src 'self' data:; font-src 'self' data:; style-src 'self' 'unsafe-inline'; connect-src 'self'; frame-ancestors 'none'",
      );
    }
    return payload;
  });
}

/** While closing, how often connections are looked at (one at rest at two looks in a row is closed). */
const CLOSING_SWEEP_MS = 250;

/** Resolves after the event loop has polled for I/O at least once (data already sent to us has been read). */
const ioTurn = () => new Promise<void>((resolve) => setImmediate(() => setImmediate(resolve)));

/**
 * Closing without hanging (docs/platform.md, "Shutdown"). Node's server.close() drops only the connections idle
 * at that moment; a request in flight then was answered keep-alive, and its client (a browser, a load balancer,
 * this server's own calls to its emulators over keep-alive pools) held the connection, so close() waited for it
 * until the forced exit. Once closing, every answer says `Connection: close` (Node closes the connection after
 * it), and a connection whose answer went out keep-alive before (an event stream ended by a preClose hook, a
 * reply whose headers were already sent) is closed once it has nothing in flight. A request that begins once
 * closing is answered 503 `unavailable`. And while closing, a connection at rest (nothing in flight, nothing of a
 * next request sent) at two looks in a row is closed: Node's close() keeps a connection that has sent no request
 * yet (a browser's preconnect, a pool's new connection) as busy, and stops the headers timeout that would end it,
 * so one such connection held close() to the forced exit. (Waiting one turn of I/O in preClose, so that bytes
 * already sent on an idle connection are read before server.close() drops it, once let such a connection in
 * before the sweep existed, and a provider-timeout test hung 70 s: it is not done.)
 */
function closeConnectionsWhenClosing(app: FastifyInstance): void {
  let closing = false;
  let sweep: NodeJS.Timeout | undefined;
  const sockets = new Set<Socket>();
  const inFlight = new WeakMap<Socket, number>();
  // What a connection had sent when it last had nothing in flight: more since is the start of its next request.
  const readAtRest = new WeakMap<Socket, number>();
  app.server.on('connection', (socket: Socket) => {
    sockets.add(socket);
    readAtRest.set(socket, 0);
    socket.once('close', () => sockets.delete(socket));
  });
  const closeIfIdle = (socket: Socket) => {
    const read = socket.bytesRead;
    void ioTurn().then(() => {
      if (!socket.destroyed && !inFlight.get(socket) && socket.bytesRead === read) socket.destroySoon();
    });
  };
  app.server.on('request', (req: IncomingMessage, res: ServerResponse) => {
    const socket = req.socket;
    inFlight.set(socket, (inFlight.get(socket) ?? 0) + 1);
    res.once('close', () => {
      const left = (inFlight.get(socket) ?? 1) - 1;
      inFlight.set(socket, left);
      if (left === 0) readAtRest.set(socket, socket.bytesRead);
      if (closing && left === 0) closeIfIdle(socket);
    });
  });
  app.addHook('preClose', async () => {
    closing = true;
    // Closed at the second look that finds it at rest (nothing in flight, nothing of a next request read).
    const atRest = new WeakSet<Socket>();
    sweep = setInterval(() => {
      for (const socket of sockets) {
        if (inFlight.get(socket) || socket.bytesRead !== readAtRest.get(socket)) atRest.delete(socket);
        else if (atRest.has(socket)) socket.destroySoon();
        else atRest.add(socket);
      }
    }, CLOSING_SWEEP_MS);
    sweep.unref();
  });
  app.addHook('onClose', async () => clearInterval(sweep));
  app.addHook('onSend', async (request, reply, payload) => {
    if (closing && request.raw.httpVersionMajor === 1) reply.header('connection', 'close');
    return payload;
  });
  // A request that begins once closing is refused like every other error (contract §1), not with Fastify's bare
  // JSON (return503OnClosing is off): the first onRequest hook, before authentication does any work.
  app.addHook('onRequest', async (request, reply) => {
    if (!closing) return;
    reply.header('retry-after', '1');
    return sendProblem(request, reply, 503, 'unavailable', 'The service is shutting down: try again shortly');
  });
}

export interface BuildOptions {
  config: Config;
  database: Database;
  /** Where log lines go (default stdout); tests read it to prove what logs never carry. */
  logStream?: NodeJS.WritableStream;
}

export async function buildApp({ config, database, logStream }: BuildOptions): Promise<FastifyInstance> {
  const app = Fastify({
    // Errors are logged without the values they quote (a failed statement's parameters, a key's detail).
    logger: {
      level: config.logLevel,
      serializers: { err: safeError },
      ...(logStream ? { stream: logStream } : {}),
    },
    bodyLimit: 1024 * 1024,
    requestIdHeader: false,
    genReqId: (req) => {
      const sent = req.headers['x-request-id'];
      return typeof sent === 'string' && REQUEST_ID_PATTERN.test(sent) ? sent : newId('req');
    },
    // Idle connections close with the server; the others once answered (closeConnectionsWhenClosing).
    forceCloseConnections: 'idle',
    // Requests that begin while closing get a 503 problem from closeConnectionsWhenClosing.
    return503OnClosing: false,
    // request.ip comes from X-Forwarded-For only when the peer is a trusted proxy (ATRIUM_TRUST_PROXY).
    trustProxy: trustProxyFunction(config.trustProxy),
    // One line per request, written by registerRequestHardening (route pattern, never the query string).
    logController: new LogController({ disableRequestLogging: true }),
    frameworkErrors,
  });
  // Errors of Node's HTTP parser (before there is a request) answer as problem+json too.
  app.server.removeAllListeners('clientError');
  app.server.on('clientError', clientErrorHandler(app.log));
  closeConnectionsWhenClosing(app);
  app.setValidatorCompiler(validatorCompiler);
  app.setSerializerCompiler(serializerCompiler);
  // JSON (empty = no body); raw bytes and forms only for routes that opt in (config.rawBody / formBody).
  registerBodyParsers(app);

  const scheduler = new Scheduler(database, app.log);
  const deps: AppDeps = {
    config,
    database,
    db: database.db,
    scheduler,
    principals: new PrincipalCache(),
    probes: MODULES.flatMap((module) => module.probes ?? []),
    monitors: MODULES.flatMap((module) => module.monitors ?? []),
    routes: [],
    selfUrl: () => {
      if (config.publicUrl) return config.publicUrl;
      const address = app.server.address() as AddressInfo | null;
      const host = config.host.includes(':') ? `[${config.host}]` : config.host;
      return `http://${host === '0.0.0.0' ? '127.0.0.1' : host}:${address?.port ?? config.port}`;
    },
  };
  app.decorate('atrium', deps);
  // Modules register their implementations of platform and other modules' interfaces first.
  for (const module of MODULES) module.init?.(deps);
  app.addHook('onRoute', (route) => {
    for (const method of [route.method].flat()) {
      if (method !== 'HEAD') {
        deps.routes.push({ method, url: route.url, auth: route.config?.auth, idempotent: route.config?.idempotent });
      }
    }
  });
  app.addHook('onClose', async () => scheduler.stop());
  const stopAuthListener = await database.listen(AUTH_CHANNEL, (key) => deps.principals.invalidate(key), {
    // Revocations and tier changes notified while the listening connection was down are lost.
    onReconnect: () => deps.principals.invalidate('*'),
  });
  app.addHook('onClose', async () => stopAuthListener());

  installErrorHandling(app);
  securityHeaders(app, config);
  registerRequestHardening(app);
  await app.register(fastifyCookie);
  registerAuthentication(app);
  registerIdempotency(app);

  await app.register(fastifySwagger, {
    openapi: {
      openapi: '3.1.0',
      info: {
        title: 'Atrium API',
        version: PRODUCT_VERSION,
        description:
          'Workspace platform for care teams. Errors are RFC 9457 problem+json with a stable `code`. ' +
          'Request bodies are JSON in UTF-8: a `charset` other than utf-8 is 415 `unsupported_media_type`. ' +
          'Authenticate with `Authorization: Bearer <API token>` or the session cookie from /auth/sign-in ' +
          '(cookie requests that change state need `X-Requested-With`). The operator API takes only ATRIUM_OPERATOR_TOKEN.',
      },
      components: {
        securitySchemes: {
          bearer: { type: 'http', scheme: 'bearer' },
          session: { type: 'apiKey', in: 'cookie', name: 'atrium_session' },
        },
      },
      security: [{ bearer: [] }, { session: [] }],
      tags: MODULES.flatMap((module) => module.tags ?? []),
    },
    // What the routes really do, not only their schemas: media types, headers, raw request bodies.
    transform: routeTransform,
    transformObject: (documents) =>
      'openapiObject' in documents
        ? documentHeadersAndBodies(
            documentMediaTypes(documents.openapiObject as Parameters<typeof documentMediaTypes>[0]),
          )
        : documents.swaggerObject,
  });
  await app.register(fastifySwaggerUi, {
    routePrefix: '/docs',
    // The product's own title and version on the page, not the UI library's.
    theme: { title: `Atrium API ${PRODUCT_VERSION}` },
    uiConfig: { docExpansion: 'list', deepLinking: true },
  });
  app.get('/api/v1/openapi.json', { config: { auth: 'public' }, schema: { hide: true } }, async () => app.swagger());

  for (const module of MODULES) if (module.rootRoutes) await app.register(module.rootRoutes);
  await app.register(
    async (api) => {
      for (const module of MODULES) if (module.routes) await api.register(module.routes);
    },
    { prefix: '/api/v1' },
  );
  if (config.emulators) await app.register(emulatorRoutes(MODULES), { prefix: '/_emulators' });

  // Absolute, so the folder check of files built later compares like with like (ATRIUM_WEB_DIST may be relative).
  const root = resolve(webDist());
  const hasWeb = existsSync(join(root, 'index.html'));
  if (hasWeb) {
    await app.register(fastifyStatic, { root, prefix: '/', wildcard: false, index: ['index.html'] });
  }
  // The files listed above are those of the start; a web build made while the server runs (another
  // instance's `npm start` from the same checkout) brings a new index.html naming new asset files,
  // which are served from here (else every page is blank until a restart).
  const builtLater = (path: string): string | undefined => {
    let file: string;
    try {
      file = resolve(root, `.${decodeURIComponent(path)}`);
    } catch {
      return undefined;
    }
    if (!file.startsWith(root + sep) || !existsSync(file) || !statSync(file).isFile()) return undefined;
    return relative(root, file);
  };
  // Client-side routes (/patients, /messages, …) load the app shell; everything else is a 404 problem.
  app.setNotFoundHandler((request, reply) => {
    const path = routedPath(request);
    const apiLike = path.startsWith('/api/') || path.startsWith('/_emulators/') || path.startsWith('/docs');
    if (hasWeb && request.method === 'GET' && !apiLike && !/\.[a-z0-9]+$/i.test(path)) {
      return reply.type('text/html; charset=utf-8').sendFile('index.html');
    }
    const later = hasWeb && (request.method === 'GET' || request.method === 'HEAD') && !apiLike && builtLater(path);
    if (later) return reply.sendFile(later);
    return sendProblem(request, reply, 404, 'not_found', `No route ${request.method} ${path}`);
  });
  return app;
}
