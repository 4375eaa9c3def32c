import Fastify, { type FastifyInstance } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { AppError, installErrorHandling } from './errors.js';

// The problem+json mapping on a bare Fastify instance with the app's error handling.
let app: FastifyInstance;

beforeAll(async () => {
  app = Fastify();
  installErrorHandling(app);
  app.get('/limited-silently', async () => {
    throw new AppError('rate_limited', 429, 'Slow down');
  });
  app.get('/limited-for-a-while', async () => {
    throw new AppError('rate_limited', 429, 'Slow down', {}, { 'retry-after': '42' });
  });
  app.get('/database-gone', async () => {
    throw new Error('Failed query: select 1', { cause: new Error('Connection terminated unexpectedly') });
  });
  app.get('/database-shutting-down', async () => {
    throw Object.assign(new Error('terminating connection due to administrator command'), { code: '57P01' });
  });
  app.get('/plain-bug', async () => {
    throw Object.assign(new Error('relation "x" does not exist'), { code: '42P01' });
  });
  await app.ready();
});
afterAll(async () => {
  await app?.close();
});

describe('problem responses', () => {
  it('a 429 always says when to come back (contract §1): the refuser’s wait, else one second', async () => {
    const silent = await app.inject({ method: 'GET', url: '/limited-silently' });
    expect(silent.statusCode).toBe(429);
    expect(silent.headers['content-type']).toContain('application/problem+json');
    expect(silent.json()).toMatchObject({ status: 429, code: 'rate_limited' });
    expect(silent.headers['retry-after']).toBe('1');
    const named = await app.inject({ method: 'GET', url: '/limited-for-a-while' });
    expect(named.headers['retry-after']).toBe('42');
  });

  it('a database that went away under the request is 503 unavailable with Retry-After, a bug stays 500', async () => {
    for (const url of ['/database-gone', '/database-shutting-down']) {
      const res = await app.inject({ method: 'GET', url });
      expect(res.statusCode, url).toBe(503);
      expect(res.headers['content-type']).toContain('application/problem+json');
      expect(res.json()).toMatchObject({ status: 503, code: 'unavailable' });
      expect(res.headers['retry-after']).toBe('1');
    }
    const bug = await app.inject({ method: 'GET', url: '/plain-bug' });
    expect(bug.statusCode).toBe(500);
    expect(bug.json().code).toBe('internal_error');
  });
});
