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
});
