import { describe, expect, it } from 'vitest';
import { silentLogger } from '../../src/log/logger.js';
import { fetchedSecrets } from '../../src/webhooks/secrets.js';

/** A provider whose GET /webhooks/keys answer the test sets, on a clock the test moves. */
function rotatingProvider() {
  let answer: string[] | Error = ['s1'];
  let clock = 1_000_000;
  const source = fetchedSecrets({
    fetch: async () => {
      if (answer instanceof Error) throw answer;
      return answer;
    },
    refreshIntervalMs: 3_600_000,
    minRefetchIntervalMs: 0,
    fetchTimeoutMs: 1000,
    retiredOverlapMs: 600_000,
    log: silentLogger(),
    now: () => clock,
  });
  return {
    source,
    answer: (a: string[] | Error) => (answer = a),
    advance: (ms: number) => (clock += ms),
  };
}

describe('fetched webhook secrets', () => {
  it('keeps a rotated-out secret only for the overlap, then stops verifying with it', async () => {
    const p = rotatingProvider();
    await p.source.start();
    expect(p.source.current()).toEqual(['s1']);
    p.advance(1000);
    p.answer(['s2']);
    expect(await p.source.refreshAfterFailure()).toBe(true);
    expect(p.source.current()).toEqual(['s2', 's1']);
    p.advance(599_000);
    expect(p.source.current()).toContain('s1');
    p.advance(1_000);
    expect(p.source.current()).toEqual(['s2']);
    p.source.stop();
  });

  it('keeps the last returned secrets while the provider cannot be reached', async () => {
    const p = rotatingProvider();
    await p.source.start();
    p.answer(new Error('provider down'));
    p.advance(10 * 600_000);
    expect(await p.source.refreshAfterFailure()).toBe(false);
    expect(p.source.current()).toEqual(['s1']);
    p.source.stop();
  });

  it('a secret returned again is not retired', async () => {
    const p = rotatingProvider();
    await p.source.start();
    p.answer(['s2', 's1']);
    await p.source.refreshAfterFailure();
    p.advance(3 * 600_000);
    expect([...p.source.current()].sort()).toEqual(['s1', 's2']);
    p.source.stop();
  });
});
