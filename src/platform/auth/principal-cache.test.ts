import { describe, expect, it } from 'vitest';
import { PrincipalCache } from './principal-cache.js';

type Principal = Parameters<PrincipalCache['set']>[1];

const principal = (tier: Principal['tier']): Principal => ({
  userId: 'usr_1',
  workspaceId: 'ws_1',
  organizationId: null,
  tier,
  role: 'admin',
  isProvider: false,
});

describe('PrincipalCache', () => {
  it('does not cache a lookup that raced an invalidation (stale tier across instances)', () => {
    const cache = new PrincipalCache();
    // A request starts reading the credential (old tier) …
    const generation = cache.generation;
    // … the tier changes and the NOTIFY arrives before the read finishes …
    cache.invalidate('*');
    // … so the old row it read must not be cached for the next 30 s.
    cache.set('hash', principal('free'), 'token', undefined, generation);
    expect(cache.get('hash')).toBeUndefined();
    // A read that started after the invalidation is cached.
    cache.set('hash', principal('standard'), 'token', undefined, cache.generation);
    expect(cache.get('hash')?.principal.tier).toBe('standard');
  });

  it('tells listeners about every invalidation, and echo resolves on the next one', async () => {
    const cache = new PrincipalCache();
    const seen: string[] = [];
    const stop = cache.onInvalidate((key) => seen.push(key));
    cache.invalidate('abc');
    const echo = cache.echo('*', 5_000);
    let resolved = false;
    void echo.then(() => {
      resolved = true;
    });
    await Promise.resolve();
    expect(resolved).toBe(false);
    cache.invalidate('*');
    await echo;
    stop();
    cache.invalidate('def');
    expect(seen).toEqual(['abc', '*']);
  });
});
