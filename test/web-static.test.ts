// The web app's files: looked up on each request, so a build made while the server runs is served whole.
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestApp, type TestApp } from './helpers/app.js';

let t: TestApp;
let dist: string;
const before = process.env.ATRIUM_WEB_DIST;

beforeAll(async () => {
  dist = mkdtempSync(join(tmpdir(), 'atrium-web-'));
  mkdirSync(join(dist, 'assets'));
  writeFileSync(join(dist, 'index.html'), '<!doctype html><script src="/assets/index-old.js"></script>');
  writeFileSync(join(dist, 'assets', 'index-old.js'), 'console.log("old")');
  process.env.ATRIUM_WEB_DIST = dist;
  t = await createTestApp();
});
afterAll(async () => {
  if (before === undefined) delete process.env.ATRIUM_WEB_DIST;
  else process.env.ATRIUM_WEB_DIST = before;
  await t?.close();
  rmSync(dist, { recursive: true, force: true });
});

describe('web app files', () => {
  it('serves the app shell for client routes and its assets', async () => {
    for (const url of ['/', '/patients', '/calendar/anything']) {
      const res = await t.request({ method: 'GET', url });
      expect(res.statusCode, url).toBe(200);
      expect(res.body).toContain('index-old.js');
    }
    expect((await t.request({ method: 'GET', url: '/assets/index-old.js' })).body).toContain('old');
  });

  it('serves a build made after the start: the new index.html and the new assets it names', async () => {
    writeFileSync(join(dist, 'assets', 'index-new.js'), 'console.log("new")');
    writeFileSync(join(dist, 'index.html'), '<!doctype html><script src="/assets/index-new.js"></script>');
    rmSync(join(dist, 'assets', 'index-old.js'));
    expect((await t.request({ method: 'GET', url: '/patients' })).body).toContain('index-new.js');
    const asset = await t.request({ method: 'GET', url: '/assets/index-new.js' });
    expect(asset.statusCode).toBe(200);
    expect(asset.body).toContain('new');
  });

  it('a missing file, an unknown API route and a path out of the folder are 404 problems', async () => {
    writeFileSync(join(dist, '..', 'outside.js'), 'secret');
    for (const url of [
      '/assets/index-old.js',
      '/api/v1/nothing-here.js',
      '/%2e%2e/outside.js',
      '/assets/%2e%2e/%2e%2e/outside.js',
    ]) {
      const res = await t.request({ method: 'GET', url });
      expect(res.statusCode, url).toBe(404);
      expect(String(res.headers['content-type']), url).toMatch(/^application\/problem\+json/);
    }
    rmSync(join(dist, '..', 'outside.js'), { force: true });
  });
});
