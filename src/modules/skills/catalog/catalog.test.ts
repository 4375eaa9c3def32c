// The built-in manifests ship with the code: the full check runs here, not at every start.
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { validateManifest } from '../../../../packages/skill-sdk/src/manifest.js';
import { BUILTIN_SKILLS, BUILTIN_SLUGS } from './index.js';

const folders = readdirSync(new URL('.', import.meta.url)).filter((f) =>
  statSync(new URL(`./${f}`, import.meta.url)).isDirectory(),
);

describe('the built-in skill catalog', () => {
  it('lists every skill folder', () => {
    expect([...BUILTIN_SLUGS].sort()).toEqual(folders.sort());
  });

  it.each(folders)('%s: the manifest passes validateManifest, with its folder as slug and instructions', (slug) => {
    const raw = JSON.parse(readFileSync(new URL(`./${slug}/manifest.json`, import.meta.url), 'utf8'));
    const check = validateManifest(raw);
    expect(check.ok ? [] : check.errors).toEqual([]);
    const skill = BUILTIN_SKILLS.find((s) => s.manifest.slug === slug);
    expect(skill?.content.trim().length).toBeGreaterThan(0);
    for (const tool of raw.tools) expect(typeof skill?.tools[tool.name]).toBe('function');
  });
});
