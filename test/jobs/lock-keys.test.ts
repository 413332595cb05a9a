import { describe, expect, it } from 'vitest';
import { lockKeyTable } from '../../src/jobs/lock-keys.js';

describe('advisory lock keys', () => {
  it('gives no two mechanisms the same key (session and transaction locks share one key space)', () => {
    const owners = new Map<bigint, Set<string>>();
    for (const [name, keys] of lockKeyTable()) {
      for (const key of Object.values(keys)) owners.set(key, (owners.get(key) ?? new Set()).add(name));
    }
    const shared = [...owners].filter(([, names]) => names.size > 1).map(([key, names]) => `${key.toString(16)}: ${[...names].join(', ')}`);
    expect(shared).toEqual([]);
    expect(lockKeyTable().length).toBeGreaterThanOrEqual(6);
  });
});
