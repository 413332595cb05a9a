import { describe, expect, it } from 'vitest';
import { StorePipeline, type StatementPart } from '../../src/statements/store-pipeline.js';
import type { StatementLine, StatementSection } from '../../src/statements/types.js';

// The pipeline between a file's reader and its import transaction (src/statements/store-pipeline.ts),
// over a store that stands in for the transaction: each part is "sent" when store() is called and
// "runs" when the test lets it (resolve/reject in any order), as queries on one connection would.
const section = (n: number): StatementSection => ({
  identity: `s${n}`, accountIban: null, periodFrom: null, periodTo: null, firstWholeDay: null, lastWholeDay: null, booked: new Map(),
});
const lines = (n: number) => Array.from({ length: n }, () => ({}) as StatementLine);

function controlledStore() {
  const sent: StatementPart[] = [];
  const settle = new Map<number, { resolve: (v: string) => void; reject: (e: unknown) => void }>();
  const store = (part: StatementPart) => {
    sent.push(part);
    return new Promise<string | null>((resolve, reject) => settle.set(sent.length - 1, { resolve, reject }));
  };
  return { sent, settle, store };
}

const tick = () => new Promise((r) => setImmediate(r));

describe('the store pipeline of a statement import', () => {
  it('sends one statement at a time, each once the one before is stored, with its rows built when it was handed over, its lines numbered through the file', async () => {
    const { sent, settle, store } = controlledStore();
    const stored: string[] = [];
    const built: number[] = [];
    const fresh = (firstN: number) => {
      built.push(firstN);
      return { entries: [Buffer.from(`entries from ${firstN}`)], lines: [Buffer.from(`lines from ${firstN}`)], days: { accounts: [], dates: [] }, entryIndexes: [] };
    };
    const linesOf = (p: StatementPart) => p.fresh?.lines[0]?.toString();
    const pipeline = new StorePipeline<string>(store, (r) => stored.push(r), 100);
    await pipeline.add(section(0), lines(3), false, fresh);
    await pipeline.add(section(1), lines(2), true);
    await pipeline.add(section(1), lines(4), false);
    await pipeline.add(section(2), lines(1), false, fresh);
    await tick();
    // Rows built as each statement was handed over, before it is sent; one statement sent.
    expect(built).toEqual([0, 9]);
    expect(sent.map((p) => [p.index, p.firstN, p.more, linesOf(p)])).toEqual([[0, 0, false, 'lines from 0']]);
    settle.get(0)!.resolve('first');
    await tick();
    expect(sent.map((p) => [p.index, p.firstN, p.more, linesOf(p)])[1]).toEqual([1, 3, true, undefined]);
    expect(sent).toHaveLength(2);
    settle.get(1)!.resolve(null as unknown as string);
    await tick();
    expect(sent.map((p) => [p.index, p.firstN, p.more])[2]).toEqual([1, 5, false]);
    expect(sent).toHaveLength(3);
    settle.get(2)!.resolve('second');
    await tick();
    expect(sent.map((p) => [p.index, p.firstN, linesOf(p)])[3]).toEqual([2, 9, 'lines from 9']);
    settle.get(3)!.resolve('third');
    await pipeline.drain();
    expect(stored).toEqual(['first', 'second', 'third']);
  });

  it('holds the reader while more lines wait than it allows, until the oldest statement is stored', async () => {
    const { settle, store } = controlledStore();
    const pipeline = new StorePipeline<string>(store, () => undefined, 5);
    await pipeline.add(section(0), lines(4), false);
    let added = false;
    const third = pipeline.add(section(1), lines(4), false).then(() => (added = true));
    await tick();
    expect(added).toBe(false);
    settle.get(0)!.resolve('a');
    await third;
    expect(added).toBe(true);
    settle.get(1)!.resolve('b');
    await pipeline.drain();
  });

  it('reports the first failure and sends nothing after it', async () => {
    const { sent, settle, store } = controlledStore();
    const pipeline = new StorePipeline<string>(store, () => undefined, 100);
    await pipeline.add(section(0), lines(1), false);
    await pipeline.add(section(1), lines(1), false);
    await pipeline.add(section(2), lines(1), false);
    await tick();
    settle.get(0)!.resolve('a');
    await tick();
    settle.get(1)!.reject(new Error('second'));
    await tick();
    // The third was queued behind it: it is never sent to a transaction that failed.
    expect(sent).toHaveLength(2);
    await expect(pipeline.drain()).rejects.toThrow('second');
    await expect(pipeline.add(section(3), lines(1), false)).rejects.toThrow('second');
    expect(sent).toHaveLength(2);
  });

  it("after the reader's own error, waits for what was sent and reports a statement's failure before it", async () => {
    const { sent, settle, store } = controlledStore();
    const pipeline = new StorePipeline<string>(store, () => undefined, 100);
    await pipeline.add(section(0), lines(1), false);
    await pipeline.add(section(1), lines(1), false);
    let settled = false;
    const reported = pipeline.settle(new Error('statement 3 is not well-formed')).then((e) => {
      settled = true;
      return e;
    });
    await tick();
    expect(settled).toBe(false);
    settle.get(0)!.reject(new Error('statement 1 was refused'));
    expect(((await reported) as Error).message).toBe('statement 1 was refused');
    expect(sent).toHaveLength(1);

    const clean = controlledStore();
    const second = new StorePipeline<string>(clean.store, () => undefined, 100);
    await second.add(section(0), lines(1), false);
    await tick();
    clean.settle.get(0)!.resolve('ok');
    expect(((await second.settle(new Error('statement 2 is not well-formed'))) as Error).message).toBe('statement 2 is not well-formed');
  });

  it('beside a receiver whose commits are slow, stores no statement until they are fast again, one statement at a time', async () => {
    const { sent, settle, store } = controlledStore();
    let pressureMs = 50;
    const pipeline = new StorePipeline<string>(store, () => undefined, 100, {
      pressureMs: () => pressureMs,
      pace: { maxDuty: 1, minDuty: 1 / 16, yieldAboveMs: 10, step: 0.05 },
    });
    await pipeline.add(section(0), lines(1), false);
    await pipeline.add(section(1), lines(1), false);
    await new Promise((r) => setTimeout(r, 100));
    expect(sent).toHaveLength(0);
    pressureMs = 2;
    await new Promise((r) => setTimeout(r, 60));
    expect(sent).toHaveLength(1);
    settle.get(0)!.resolve('a');
    await new Promise((r) => setTimeout(r, 60));
    expect(sent).toHaveLength(2);
    settle.get(1)!.resolve('b');
    await pipeline.drain();
  });
  it("beside a receiver, paces a statement's copy chunk by chunk: the next chunk waits while the receiver is slow, and the duty answers to the slowdown a chunk caused", async () => {
    let pressureMs = 2;
    const chunks: string[] = [];
    const paces: unknown[] = [];
    const gaveWay: number[] = [];
    let statement = 0;
    const store = async (_part: StatementPart, pace?: (busyMs: number) => Promise<void>) => {
      paces.push(pace);
      if (!pace) return 'copied in one piece';
      statement += 1;
      chunks.push(`${statement}a`);
      // The receiver's commits slow down while the first statement's first chunk is stored.
      if (statement === 1) pressureMs = 50;
      await pace(5);
      chunks.push(`${statement}b`);
      await pace(5);
      return 'stored';
    };
    const pipeline = new StorePipeline<string>(store, () => undefined, 100, {
      pressureMs: () => pressureMs,
      pace: { maxDuty: 1, minDuty: 1 / 16, yieldAboveMs: 10, step: 0.05 },
      gaveWay: (ms) => gaveWay.push(ms),
    });
    await pipeline.add(section(0), lines(1), false);
    await new Promise((r) => setTimeout(r, 150));
    expect(chunks).toEqual(['1a']);
    pressureMs = 2;
    await pipeline.drain();
    expect(chunks).toEqual(['1a', '1b']);
    expect(typeof paces[0]).toBe('function');
    // The receiver was fast again when the first statement ended, but its first chunk had slowed
    // it: the duty halved, so the next statement's chunks each rest as long as they worked.
    const before = gaveWay.length;
    await pipeline.add(section(1), lines(1), false);
    await pipeline.drain();
    expect(chunks).toEqual(['1a', '1b', '2a', '2b']);
    expect(gaveWay.slice(before, before + 2)).toEqual([5, 5]);
    // Alone (no receiver to yield to), the store gets no pace: its copy goes in one piece.
    const stored: string[] = [];
    const alone = new StorePipeline<string>(store, (result) => stored.push(result), 100);
    await alone.add(section(2), lines(1), false);
    await alone.drain();
    expect(paces.at(-1)).toBeUndefined();
    expect(stored).toEqual(['copied in one piece']);
  });
});
