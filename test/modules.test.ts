// The module list drives the app: every module folder is listed once, and what the definitions
// declare (tags, probes, emulators, seed) is what the running app does.
import { existsSync, readdirSync, statSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { emulatorsOf } from '../src/emulators/index.js';
import { MODULES } from '../src/modules/index.js';
import { defineModule } from '../src/platform/module.js';
import { seedDemo } from '../src/seed.js';
import { createTestApp, type TestApp } from './helpers/app.js';

const MODULES_DIR = join(dirname(fileURLToPath(import.meta.url)), '../src/modules');

let t: TestApp;
beforeAll(async () => {
  t = await createTestApp();
});
afterAll(async () => t?.close());

describe('the module list', () => {
  it('lists every module folder exactly once, by its folder name', async () => {
    const folders = readdirSync(MODULES_DIR).filter((name) => statSync(join(MODULES_DIR, name)).isDirectory());
    expect(MODULES.map((m) => m.name).sort()).toEqual(folders.sort());
    for (const name of folders) {
      const entry = await import(join(MODULES_DIR, name, 'index.ts'));
      expect(Object.values(entry)).toContain(MODULES.find((m) => m.name === name));
    }
  });

  it('declares the tables of every module that has a tables.ts', async () => {
    for (const module of MODULES) {
      const path = join(MODULES_DIR, module.name, 'tables.ts');
      const declared = Object.keys(module.tables ?? {}).sort();
      expect(declared).toEqual(existsSync(path) ? Object.keys(await import(path)).sort() : []);
    }
  });

  it('puts every module’s OpenAPI tags in the document', async () => {
    const doc = (await t.request({ method: 'GET', url: '/api/v1/openapi.json' })).json();
    const tags = doc.tags.map((tag: { name: string }) => tag.name);
    for (const tag of ['auth', 'operator', 'patients', 'webhooks', 'inbox', 'skills', 'health']) {
      expect(tags).toContain(tag);
    }
    expect(doc.paths['/api/v1/patients']).toBeDefined();
    expect(doc.paths['/livez']).toBeDefined();
  });

  it('mounts the platform’s and the modules’ emulators, and refuses two with one name', async () => {
    expect(Object.keys(emulatorsOf(MODULES))).toEqual([
      'mail',
      's3',
      'ai',
      'payer',
      'video',
      'google',
      'microsoft',
      'zoom',
      'telegram',
      'meta',
      'viber',
      'twilio',
      'payments',
      'tts',
    ]);
    const clash = defineModule({ name: 'x', emulators: { payer: async () => undefined } });
    expect(() => emulatorsOf([...MODULES, clash])).toThrow(/Two emulators are named payer/);
  });

  it('runs module probes in /readyz: a failing one answers 503 naming it', async () => {
    expect((await t.request({ method: 'GET', url: '/readyz' })).statusCode).toBe(200);
    const probe = {
      name: 'calendar-upstream',
      check: async () => {
        throw new Error('down');
      },
    };
    t.app.atrium.probes.push(probe);
    try {
      const res = await t.request({ method: 'GET', url: '/readyz' });
      expect(res.statusCode).toBe(503);
      expect(res.json()).toMatchObject({ code: 'unavailable', detail: 'The calendar-upstream probe fails' });
    } finally {
      t.app.atrium.probes.splice(t.app.atrium.probes.indexOf(probe), 1);
    }
    expect((await t.request({ method: 'GET', url: '/readyz' })).statusCode).toBe(200);
  });

  it('seeds the demo through each module’s seed, in list order (identity’s people, then patients)', async () => {
    await seedDemo(t.app);
    const signIn = await t.request({
      method: 'POST',
      url: '/api/v1/auth/sign-in',
      payload: { email: 'dr.lee@riverside.example', password: 'atrium-demo-2026' },
    });
    expect(signIn.statusCode).toBe(200);
    const cookie = String(signIn.headers['set-cookie']).split(';')[0];
    const patients = await t.request({ method: 'GET', url: '/api/v1/patients?limit=50', headers: { cookie } });
    expect(patients.statusCode).toBe(200);
    const items = patients.json().items as { mrn: string; preferredProviderId: string | null }[];
    expect(items.map((p) => p.mrn).sort()).toEqual(['RC-1001', 'RC-1002', 'RC-1003', 'RC-1004']);
    expect(items.find((p) => p.mrn === 'RC-1001')?.preferredProviderId).toEqual(signIn.json().user.id);
    const vance = items.find((p) => p.mrn === 'RC-1001') as unknown as { id: string };
    const coverage = await t.request({
      method: 'GET',
      url: `/api/v1/patients/${vance.id}/coverage`,
      headers: { cookie },
    });
    expect(coverage.json()).toMatchObject({ payerId: 'AETNA', memberId: 'W123456789' });
  });
});
