import { describe, expect, it } from 'vitest';
import { AbandonedError, GroupCommit } from '../../src/batch/group-commit.js';
import { writeHalving } from '../../src/batch/halving.js';

/** A write whose batches the test releases one at a time, recording what each batch held. */
function gated<T, R>(result: (item: T) => R) {
  const batches: T[][] = [];
  const releases: ((fail?: Error) => void)[] = [];
  const write = (items: readonly T[]) => {
    batches.push([...items]);
    return new Promise<R[]>((resolve, reject) => releases.push((fail) => (fail ? reject(fail) : resolve(items.map(result)))));
  };
  return { batches, releases, write };
}

const tick = () => new Promise((r) => setImmediate(r));

describe('GroupCommit', () => {
  it('writes the first item alone, gathers what arrives meanwhile into the next batch, and settles each item with its own result', async () => {
    const { batches, releases, write } = gated((n: number) => n * 10);
    const batcher = new GroupCommit({ write, slots: 1 });
    const results = [1, 2, 3, 4].map((n) => batcher.add(n));
    expect(batches).toEqual([[1]]);
    releases.shift()!();
    await tick();
    expect(batches).toEqual([[1], [2, 3, 4]]);
    releases.shift()!();
    expect(await Promise.all(results)).toEqual([10, 20, 30, 40]);
  });

  it('takes what `take` allows from the front of the queue, and at least one item', async () => {
    const { batches, releases, write } = gated((n: number) => n);
    const batcher = new GroupCommit({ write, slots: 1, take: (queue) => (queue[0] === 4 ? 0 : 2) });
    const all = Promise.all([1, 2, 3, 4, 5].map((n) => batcher.add(n)));
    for (let i = 0; i < 4; i += 1) {
      releases.shift()?.();
      await tick();
    }
    expect(await all).toEqual([1, 2, 3, 4, 5]);
    expect(batches).toEqual([[1], [2, 3], [4], [5]]);
  });

  it('never has more batches in flight than slots', async () => {
    let running = 0;
    let peak = 0;
    const batcher = new GroupCommit({
      slots: 3,
      take: () => 1,
      write: async (items: readonly number[]) => {
        running += 1;
        peak = Math.max(peak, running);
        await new Promise((r) => setTimeout(r, 2));
        running -= 1;
        return items.map((n) => -n);
      },
    });
    const results = await Promise.all(Array.from({ length: 20 }, (_, i) => batcher.add(i)));
    expect(peak).toBe(3);
    expect(results).toEqual(Array.from({ length: 20 }, (_, i) => -i));
  });

  it('idle resolves at once when nothing waits, and otherwise only after the last batch settled', async () => {
    const { releases, write } = gated((n: number) => n);
    const batcher = new GroupCommit({ write, slots: 1 });
    await batcher.idle();
    const items = [batcher.add(1), batcher.add(2)];
    let idle = false;
    void batcher.idle().then(() => (idle = true));
    releases.shift()!();
    await tick();
    expect(idle).toBe(false);
    expect(batcher.oldestPendingMs()).toBeGreaterThanOrEqual(0);
    releases.shift()!();
    await Promise.all(items);
    await tick();
    expect(idle).toBe(true);
    expect(batcher.oldestPendingMs()).toBe(0);
  });

  it('fails every item of a batch whose write rejects or throws, and goes on with the next batch', async () => {
    const { releases, write } = gated((n: number) => n);
    const batcher = new GroupCommit({ write, slots: 1 });
    const first = batcher.add(1);
    const second = Promise.allSettled([batcher.add(2), batcher.add(3)]);
    releases.shift()!();
    await tick();
    const third = batcher.add(4);
    releases.shift()!(new Error('db down'));
    await tick();
    releases.shift()!();
    expect(await first).toBe(1);
    expect((await second).map((r) => r.status)).toEqual(['rejected', 'rejected']);
    expect(await third).toBe(4);

    const throwing = new GroupCommit<number, number>({ slots: 1, write: () => { throw new Error('sync'); } });
    await expect(throwing.add(1)).rejects.toThrow('sync');
    const short = new GroupCommit<number, number>({ slots: 1, write: async () => [] });
    await expect(short.add(1)).rejects.toThrow('a batch of 1 items was written with 0 results');
  });

  it("leaves the failure policy to the caller's write: halving a failed batch gives each item its own outcome", async () => {
    const writes: number[][] = [];
    // A statement that fails when it holds the bad item; the policy halves until it is alone.
    const statement = async (items: readonly number[]) => {
      writes.push([...items]);
      if (items.includes(13)) throw new Error('bad row');
      return items.map((n) => ({ ok: true as const, n }));
    };
    const halved: number[] = [];
    const batcher = new GroupCommit({
      slots: 1,
      write: (items: readonly number[]) =>
        writeHalving<number, { ok: true; n: number } | { ok: false; n: number }>(items, {
          write: statement,
          alone: async (n) => ({ ok: false, n }),
          onHalve: (size) => halved.push(size),
        }),
    });
    const first = batcher.add(0);
    const rest = Array.from({ length: 16 }, (_, i) => batcher.add(i + 1));
    const results = await Promise.all([first, ...rest]);
    expect(results).toEqual(Array.from({ length: 17 }, (_, n) => ({ ok: n !== 13, n })));
    // The batch of 16 halved down to the bad item: 16, 8, 4, 2; 1 + 1 + 2 log2(16) statements.
    expect(halved).toEqual([16, 8, 4, 2]);
    expect(writes.length).toBe(10);
  });

  it('halving passes on at once an error every half would meet, and fails the batch when the item alone throws', async () => {
    let statements = 0;
    const down = Object.assign(new Error('connection refused'), { transient: true });
    await expect(
      writeHalving([1, 2, 3, 4], {
        write: async () => {
          statements += 1;
          throw down;
        },
        alone: async () => 0,
        passOn: (error) => (error as { transient?: boolean }).transient === true,
      }),
    ).rejects.toBe(down);
    expect(statements).toBe(1);
    await expect(
      writeHalving([1, 2, 3], {
        write: async (items) => {
          if (items.includes(2)) throw new Error('bad row');
          return items;
        },
        alone: async (_n, error) => {
          throw error;
        },
      }),
    ).rejects.toThrow('bad row');
  });

  it('abandons an item whose time runs out: taken out of the queue if not yet sent, reported as sent otherwise', async () => {
    const { batches, releases, write } = gated((n: number) => n);
    const batcher = new GroupCommit({ write, slots: 1 });
    const inFlight = batcher.add(1, 20);
    const queued = batcher.add(2, 20);
    const kept = batcher.add(3);
    const [a, b] = await Promise.allSettled([inFlight, queued]);
    expect(a).toMatchObject({ status: 'rejected', reason: new AbandonedError(true) });
    expect((a as PromiseRejectedResult).reason.sent).toBe(true);
    expect((b as PromiseRejectedResult).reason).toBeInstanceOf(AbandonedError);
    expect((b as PromiseRejectedResult).reason.sent).toBe(false);
    releases.shift()!();
    await tick();
    releases.shift()!();
    expect(await kept).toBe(3);
    // Item 2 was never written.
    expect(batches).toEqual([[1], [3]]);
    await batcher.idle();
  });
});
