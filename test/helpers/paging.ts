// Walks a paged list (contract §1: `{items, nextCursor}`, `limit`, `cursor`) to its end through the API, checking
// each page's status and size on the way; answers the ids in the order the pages gave them.
import { expect } from 'vitest';
import type { TestApp } from './app.js';

export async function allPages(
  t: TestApp,
  options: { url: string; token: string; query?: string; limit: number },
): Promise<string[]> {
  const ids: string[] = [];
  let cursor: string | null = null;
  do {
    const params = new URLSearchParams(options.query ?? '');
    params.set('limit', String(options.limit));
    if (cursor) params.set('cursor', cursor);
    const res = await t.request({ method: 'GET', url: `${options.url}?${params}`, token: options.token });
    expect(res.statusCode, res.body).toBe(200);
    const page = res.json() as { items: { id: string }[]; nextCursor: string | null };
    expect(page.items.length).toBeLessThanOrEqual(options.limit);
    ids.push(...page.items.map((x) => x.id));
    cursor = page.nextCursor;
  } while (cursor);
  return ids;
}
