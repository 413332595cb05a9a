import { describe, expect, it } from 'vitest';
import { answerWithin } from '../../src/db/answer-within.js';

const never = () => new Promise<never>(() => undefined);
const later = <T>(ms: number, value: T) => new Promise<T>((resolve) => setTimeout(() => resolve(value), ms));

describe('answerWithin', () => {
  it('gives what the work settles to when it settles in time, and never calls onTimeout', async () => {
    let called = 0;
    await expect(answerWithin(later(5, 'rows'), 200, () => ++called)).resolves.toBe('rows');
    await expect(answerWithin(Promise.reject(new Error('refused')), 200, () => ++called)).rejects.toThrow('refused');
    await later(250, undefined);
    expect(called).toBe(0);
  });

  it("gives onTimeout's value when the work has not settled by the deadline", async () => {
    const started = performance.now();
    await expect(answerWithin(never(), 50, () => 'timeout' as const)).resolves.toBe('timeout');
    expect(performance.now() - started).toBeGreaterThanOrEqual(45);
  });

  it('rejects with what onTimeout throws', async () => {
    await expect(answerWithin(never(), 20, () => { throw new Error('database check timed out'); })).rejects.toThrow('database check timed out');
  });

  it('ignores a rejection that comes after the deadline (no unhandled rejection)', async () => {
    const unhandled: unknown[] = [];
    const onUnhandled = (reason: unknown) => unhandled.push(reason);
    process.on('unhandledRejection', onUnhandled);
    try {
      const late = new Promise<never>((_, reject) => setTimeout(() => reject(new Error('CONNECTION_DESTROYED')), 60));
      await expect(answerWithin(late, 10, () => false)).resolves.toBe(false);
      await later(120, undefined);
      expect(unhandled).toEqual([]);
    } finally {
      process.off('unhandledRejection', onUnhandled);
    }
  });

  it('does not keep the process alive while it waits', async () => {
    // A child that only waits on never-settling work must exit by itself, long before the deadline.
    const { spawnSync } = await import('node:child_process');
    const code = `import('${new URL('../../src/db/answer-within.ts', import.meta.url).pathname}').then((m) => { m.answerWithin(new Promise(() => {}), 60000, () => 0); })`;
    const started = performance.now();
    const child = spawnSync(process.execPath, ['--import', 'tsx', '-e', code], { encoding: 'utf8', timeout: 10_000 });
    expect(child.status).toBe(0);
    expect(performance.now() - started).toBeLessThan(10_000);
  });
});
