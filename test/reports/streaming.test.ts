import { Writable } from 'node:stream';
import v8 from 'node:v8';
import vm from 'node:vm';
import { afterAll, describe, expect, it } from 'vitest';
import { streamDiscrepancies } from '../../src/reports/discrepancies.js';
import { createTestDatabase, type TestDatabase } from '../helpers/database.js';

const ROWS = 200_000;

// Heap figures only mean something after a collection: garbage from finished batches would
// otherwise count as growth. This exposes gc() without a command-line flag.
v8.setFlagsFromString('--expose-gc');
const gc = vm.runInNewContext('gc') as () => void;
const retainedHeap = (): number => {
  gc();
  return process.memoryUsage().heapUsed;
};

/** Counts records and bytes and throws the text away; a small buffer makes backpressure bite. */
class Sink extends Writable {
  bytes = 0;
  records = 0;
  peakHeap = 0;
  chunks = 0;
  constructor() {
    super({ highWaterMark: 16 * 1024 });
  }
  override _write(chunk: Buffer, _enc: BufferEncoding, done: () => void): void {
    this.bytes += chunk.length;
    for (const b of chunk) if (b === 0x0a) this.records += 1;
    this.chunks += 1;
    if (this.chunks % 20 === 0) this.peakHeap = Math.max(this.peakHeap, retainedHeap());
    setImmediate(done);
  }
}

describe('streamed reports', () => {
  let db: TestDatabase | undefined;
  afterAll(async () => {
  });

  it(`streams ${ROWS} discrepancies with heap growth far below the report's size`, async () => {
    db = await createTestDatabase('report_stream', { poolMax: 2 });
    await db.sql`
      insert into discrepancies (environment, kind, status, entity_type, entity_id, subject, expected, observed, details, evidence_hash)
      select 'sandbox', 'duplicate_delivery', 'resolved', 'webhook_delivery', g::text, '', '1', g::text,
             'Delivery ' || g || ' repeats an event, "quoted", with commas; ' || repeat('x', 250), md5(g::text)
      from generate_series(1, ${ROWS}) g`;
    const sink = new Sink();
    const before = retainedHeap();
    const result = await streamDiscrepancies(db, { status: 'all' }, 'csv', sink);
    expect(result).toEqual({ rows: ROWS, aborted: false });
    expect(sink.records).toBe(ROWS + 1);
    // The report is ~80 MB of text; holding it (or its rows) would grow the heap by more than that.
    expect(sink.bytes).toBeGreaterThan(70 * 1024 * 1024);
    const growth = sink.peakHeap - before;
    console.log(`report ${Math.round(sink.bytes / 1048576)} MiB, peak retained heap growth ${Math.round(growth / 1048576)} MiB`);
    expect(sink.peakHeap).toBeGreaterThan(0);
    expect(growth).toBeLessThan(16 * 1024 * 1024);
  });

  it('stops early when the destination closes', async () => {
    const out = new Writable({
      highWaterMark: 1024,
      write(_chunk, _enc, done) {
        setImmediate(done);
      },
    });
    setTimeout(() => out.destroy(), 50);
    const result = await streamDiscrepancies(db!, { status: 'all' }, 'json', out);
    expect(result.aborted).toBe(true);
    expect(result.rows).toBeLessThan(ROWS);
    // The cursor was closed: the pool still answers.
    const [row] = await db!.sql<{ ok: number }[]>`select 1 as ok`;
    expect(row?.ok).toBe(1);
  });
});
