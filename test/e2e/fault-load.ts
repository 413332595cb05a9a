import type { Sql } from 'postgres';
import { request } from 'undici';
import { computeSignature } from '../../src/webhooks/signature.js';
import { samplePayload } from '../fixtures/spec-payloads.js';

/**
 * Deliveries sent as the provider sends them while a fault is injected: concurrent senders, each
 * delivery retried after a 503 or a failed connection until it is answered 2xx. Records every
 * answer's status and time, and the acknowledged delivery ids, for checkLedger.
 */
export interface LoadReport {
  answers: number;
  statuses: Record<number, number>;
  /** answers other than 200 and 503 (a 500 is a delivery neither stored nor refused cleanly) */
  unexpected: string[];
  longestMs: number;
  /** ids answered 2xx */
  acked: number[];
  /** events answered 2xx at least once */
  events: number;
  /** events never answered 2xx by the end of settle() */
  pending: number;
  /** X-Request-Id of every 2xx: the stored delivery_uuid (ids may be issued again after a failover) */
  ackedUuids: string[];
}

/** One answer (status 0: none, the connection failed) at performance.now() `at`. */
export interface LoadAnswer {
  at: number;
  status: number;
}

export interface Load {
  /** Stops sending new events; retries what is pending until every event is acknowledged or `timeoutMs` passes. */
  settle(timeoutMs: number): Promise<LoadReport>;
}

export function startLoad(url: string | string[], secret: string, options: { senders: number; firstEvent?: number; header?: string; onAnswer?: (answer: LoadAnswer) => void }): Load {
  const urls = Array.isArray(url) ? url : [url];
  let turn = 0;
  const header = options.header ?? 'x-service-signature';
  let next = options.firstEvent ?? 1;
  let fresh = true;
  const retry: number[] = [];
  const done = new Set<number>();
  const report: LoadReport = { answers: 0, statuses: {}, unexpected: [], longestMs: 0, acked: [], events: 0, pending: 0, ackedUuids: [] };
  const send = async (n: number) => {
    const body = JSON.stringify(samplePayload('order/confirmed', n));
    const started = performance.now();
    try {
      const r = await request(urls[turn++ % urls.length]!, { method: 'POST', body, headers: { 'content-type': 'application/json', [header]: computeSignature(Buffer.from(body), secret) }, headersTimeout: 15_000 });
      const text = await r.body.text();
      report.longestMs = Math.max(report.longestMs, performance.now() - started);
      report.answers += 1;
      report.statuses[r.statusCode] = (report.statuses[r.statusCode] ?? 0) + 1;
      options.onAnswer?.({ at: performance.now(), status: r.statusCode });
      if (r.statusCode === 200) {
        report.acked.push(Number((JSON.parse(text) as { delivery_id: number }).delivery_id));
        report.ackedUuids.push(String(r.headers['x-request-id']));
        done.add(n);
        return;
      }
      if (r.statusCode !== 503) report.unexpected.push(`${r.statusCode} ${text.slice(0, 200)}`);
    } catch {
      // No answer (connection refused or reset): the provider retries.
      options.onAnswer?.({ at: performance.now(), status: 0 });
    }
    retry.push(n);
    await new Promise((r) => setTimeout(r, 100));
  };
  const sender = async () => {
    while (fresh || retry.length > 0) {
      const n = retry.shift() ?? (fresh ? next++ : undefined);
      if (n === undefined) return;
      await send(n);
    }
  };
  const senders = Array.from({ length: options.senders }, () => sender());
  return {
    async settle(timeoutMs) {
      fresh = false;
      const deadline = setTimeout(() => retry.splice(0), timeoutMs);
      const stopAt = Date.now() + timeoutMs;
      await Promise.all(senders);
      // Retries left when every sender had finished (a late 503 requeued after its sender exited).
      while (retry.length > 0 && Date.now() < stopAt) await send(retry.shift()!);
      clearTimeout(deadline);
      report.events = done.size;
      report.pending = next - (options.firstEvent ?? 1) - done.size;
      return report;
    },
  };
}

export interface LedgerCheck {
  /** acknowledged deliveries not in the ledger, plus acknowledged events without an applied delivery */
  lost: number;
  /** events with more than one applied delivery */
  appliedTwice: number;
  /** applied parsed deliveries without their typed row */
  missingTypedRows: number;
}

export async function checkLedger(sql: Sql, ackedIds: number[]): Promise<LedgerCheck> {
  const [missing] = await sql<{ n: number }[]>`
    select count(*)::int as n from unnest(${ackedIds}::bigint[]) as a(id) where not exists (select 1 from webhook_deliveries d where d.id = a.id)`;
  const [unapplied] = await sql<{ n: number }[]>`
    select count(distinct d.event_key)::int as n from webhook_deliveries d
    where d.id = any(${ackedIds}::bigint[])
      and not exists (select 1 from webhook_deliveries a where a.applied and a.environment = d.environment and a.event_key = d.event_key)`;
  const [twice] = await sql<{ n: number }[]>`
    select count(*)::int as n from (select 1 from webhook_deliveries where applied group by environment, event_key having count(*) > 1) t`;
  const [untyped] = await sql<{ n: number }[]>`
    select count(*)::int as n from webhook_deliveries d
    where d.applied and d.parse_status = 'parsed'
      and not exists (select 1 from order_events e where e.environment = d.environment and e.event_key = d.event_key)`;
  return { lost: (missing?.n ?? 0) + (unapplied?.n ?? 0), appliedTwice: twice?.n ?? 0, missingTypedRows: untyped?.n ?? 0 };
}
