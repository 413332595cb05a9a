import { randomUUID } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { createTestDatabase, type TestDatabase } from '../helpers/database.js';
import { upsertOrdersPages } from '../../src/poller/upsert.js';
import { at, eventTime, orderEvent, pass } from './fixtures.js';

/**
 * Randomized sequences of order evidence (webhooks, some arriving late or with event_time in the
 * past; poll runs complete, failed, short or long, listing subsets of the orders, states changing
 * back and forth; time passing across grace periods) applied to two identical ledgers; after each
 * pass, the ledger whose passes are incremental must hold the same findings as the one whose
 * passes are all full (same `now`): scope.ts's claim that an order out of scope has nothing that
 * could change its findings. A failure prints the steps (`log`) that led to it; more seeds:
 * INCREMENTAL_SEEDS=1,2,...,200 npx vitest run test/reconcile/incremental-equals-full.test.ts.
 */
const STATES = ['authorized', 'pending', 'confirmed', 'declined', 'canceled', 'shipped'];

function prng(seed: number) {
  let s = seed >>> 0;
  return () => {
    s = (s + 0x6d2b79f5) >>> 0;
    let t = s;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

type Step = (db: TestDatabase) => Promise<unknown>;

async function findings(db: TestDatabase) {
  return [...await db.sql<{ kind: string; entity_id: string; subject: string; status: string }[]>`
    select kind::text, entity_id, subject, status::text from discrepancies
    where entity_type = 'order' order by kind, entity_id, subject`];
}

async function pollRunRow(db: TestDatabase, startedAt: Date, finishedAt: Date, status: string): Promise<number> {
  const [row] = await db.sql<{ id: string }[]>`
    insert into poll_runs (environment, started_at, finished_at, status)
    values ('sandbox', ${startedAt.toISOString()}::timestamptz, ${finishedAt.toISOString()}::timestamptz, ${status}) returning id`;
  return Number(row!.id);
}

describe('incremental passes reach what full passes reach (randomized order evidence)', () => {
  const seeds = (process.env.INCREMENTAL_SEEDS ?? '1,2,3,4,5,6,7,8').split(',').map(Number);
  for (const seed of seeds) {
    it(`seed ${seed}`, async () => {
      const rnd = prng(seed);
      const pick = <T>(xs: readonly T[]): T => xs[Math.floor(rnd() * xs.length)]!;
      const orders = Array.from({ length: 4 }, () => randomUUID());
      const incr = await createTestDatabase(`incr_equals_full_i_${seed}`, { poolMax: 4 });
      const full = await createTestDatabase(`incr_equals_full_f_${seed}`, { poolMax: 4 });
      const log: string[] = [];
      let t = 0; // seconds from T0
      let nanos = 0;
      const apply = async (what: string, step: Step) => {
        log.push(what);
        await step(incr);
        await step(full);
      };
      for (let i = 0; i < 28; i++) {
        const r = rnd();
        if (r < 0.35) {
          const order = pick(orders);
          const state = pick(STATES.slice(0, 5));
          // event_time up to 2 h in the past; received now, or late (its transaction committed after the last pass)
          const et = t - Math.floor(rnd() * 7200);
          const recv = rnd() < 0.25 ? t - Math.floor(rnd() * 1800) : t;
          nanos += 1;
          const ev = eventTime(et, nanos);
          await apply(`event ${order.slice(0, 4)} ${state} et=${et} recv=${recv}`, (db) =>
            orderEvent(db, { order, state, eventTime: ev, receivedAt: at(recv) }).catch(() => undefined));
        } else if (r < 0.65) {
          const status = rnd() < 0.7 ? 'complete' : pick(['failed', 'aborted']);
          const listed = orders.filter(() => rnd() < 0.8);
          const states = listed.map((o) => ({ uuid: o, state: pick(STATES) }));
          const start = t;
          const dur = rnd() < 0.2 ? 9000 : 60;
          await apply(`poll ${status} start=${start} dur=${dur} ${states.map((s) => `${s.uuid.slice(0, 4)}:${s.state}`).join(',')}`, async (db) => {
            const id = await pollRunRow(db, at(start), at(start + dur), status);
            if (states.length > 0) {
              await upsertOrdersPages(db.sql, 'sandbox', id, [{ orders: states.map((s) => ({ uuid: s.uuid, state: s.state })), observedAt: at(start + Math.floor(dur / 2)) }]);
            }
          });
        } else if (r < 0.8) {
          t += Math.floor(rnd() * 3 * 3600);
        } else {
          t += Math.floor(rnd() * 600) + 1;
          const now = at(t);
          log.push(`pass at ${t}`);
          const a = await pass(incr, now);
          const b = await pass(full, now, 'sandbox', { full: true });
          const fa = await findings(incr);
          const fb = await findings(full);
          if (JSON.stringify(fa) !== JSON.stringify(fb)) {
            expect({ mode: a.mode, incremental: fa, log }).toEqual({ mode: a.mode, incremental: fb, log });
          }
          expect(b.mode).toBe('full');
        }
        t += 1;
      }
      await incr.drop();
      await full.drop();
    });
  }
});
