import { afterEach, describe, expect, it, vi } from 'vitest';
import { startupStep } from './startup-progress.js';

afterEach(() => {
  vi.useRealTimers();
  vi.restoreAllMocks();
});

describe('start-up progress', () => {
  it('announces a step that takes over a second, then says how long it took', async () => {
    vi.useFakeTimers();
    const log = vi.spyOn(console, 'log').mockImplementation(() => undefined);
    let finish: (value: string) => void = () => undefined;
    const step = startupStep('Running database migrations', () => new Promise<string>((r) => (finish = r)));
    await vi.advanceTimersByTimeAsync(999);
    expect(log).not.toHaveBeenCalled();
    await vi.advanceTimersByTimeAsync(500);
    expect(log).toHaveBeenCalledWith('  Running database migrations…');
    finish('done');
    await expect(step).resolves.toBe('done');
    expect(log).toHaveBeenLastCalledWith('  Running database migrations: done in 1.5 s');
  });

  it('stays silent for a quick step, and passes errors through', async () => {
    const log = vi.spyOn(console, 'log').mockImplementation(() => undefined);
    await expect(startupStep('Quick', async () => 1)).resolves.toBe(1);
    await expect(startupStep('Broken', async () => Promise.reject(new Error('boom')))).rejects.toThrow('boom');
    expect(log).not.toHaveBeenCalled();
  });
});
