import { execFile } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestDatabase, type TestDatabase } from '../helpers/database.js';
import { at, eventTime, orderEvent, pollRun, retryOf, snapshot } from './fixtures.js';

interface Outcome {
  code: number;
  stdout: string;
  stderr: string;
}

function cli(db: TestDatabase, args: string[], env: Record<string, string> = {}): Promise<Outcome> {
  return new Promise((resolve) => {
    execFile(
      process.execPath,
      ['--import', 'tsx', 'src/cli.ts', ...args],
      {
        cwd: new URL('../..', import.meta.url).pathname,
        env: { ...process.env, DATABASE_URL: db.url, PROVIDER_ENV: 'sandbox', LOG_LEVEL: 'silent', WEBHOOK_GRACE_SECONDS: '60', ...env },
        timeout: 60_000,
      },
      (error, stdout, stderr) => resolve({ code: error ? Number(error.code ?? 1) : 0, stdout, stderr }),
    );
  });
}

describe('reconcile, report and discrepancy commands', () => {
  let db: TestDatabase;
  const order = randomUUID();
  beforeAll(async () => {
    db = await createTestDatabase('commands', { poolMax: 2 });
    const run = await pollRun(db, at(0));
    await snapshot(db, { order, state: 'pending', seenAt: at(0), runId: run });
    const e = await orderEvent(db, { order: randomUUID(), state: 'confirmed', eventTime: eventTime(-5), receivedAt: at(-4) });
    await retryOf(db, e.eventKey, at(-3));
  });
  afterAll(async () => {
  });

  it('runs a pass, reports it, acknowledges with exit codes as the contract says', async () => {
    expect((await cli(db, ['report', 'discrepancies', '--status', 'closed'])).code).toBe(2);
    expect((await cli(db, ['report', 'ledger'])).code).toBe(2);

    const pass = await cli(db, ['reconcile']);
    expect(pass.code).toBe(0);
    const summary = JSON.parse(pass.stdout) as { opened: number; duplicateDeliveries: number; skipped: boolean };
    expect(summary).toMatchObject({ skipped: false, opened: 1, duplicateDeliveries: 1 });

    const all = await cli(db, ['report', 'discrepancies', '--format', 'json', '--status', 'all']);
    expect(all.code, all.stderr).toBe(0);
    const rows = JSON.parse(all.stdout) as { id: number; kind: string; entity_id: string }[];
    expect(rows.map((r) => r.kind).sort()).toEqual(['duplicate_delivery', 'missed_webhook']);
    const missed = rows.find((r) => r.kind === 'missed_webhook')!;
    expect(missed.entity_id).toBe(order);

    expect((await cli(db, ['discrepancy', 'ack', String(missed.id)])).code).toBe(2);
    expect((await cli(db, ['discrepancy', 'ack', '987654', '--note', 'x'])).code).toBe(1);
    // Past 2^53 an id would round onto another discrepancy's: refused as usage, nothing acknowledged.
    const unsafe = await cli(db, ['discrepancy', 'ack', '9007199254740993', '--note', 'x']);
    expect(unsafe).toMatchObject({ code: 2, stderr: expect.stringContaining("not '9007199254740993'") });
    // Production's daemon sharing the ledger does not acknowledge the sandbox's discrepancy.
    const other = await cli(db, ['discrepancy', 'ack', String(missed.id), '--note', 'not mine'], { PROVIDER_ENV: 'production' });
    expect(other).toMatchObject({ code: 1, stderr: expect.stringContaining(`no discrepancy with id ${missed.id} in PROVIDER_ENV production`) });
    const [untouched] = await db.sql<{ status: string }[]>`select status::text from discrepancies where id = ${missed.id}`;
    expect(untouched!.status).toBe('open');
    const ack = await cli(db, ['discrepancy', 'ack', String(missed.id), '--note', 'known, see ticket 12', '--by', 'carol']);
    expect(ack.code).toBe(0);
    expect(JSON.parse(ack.stdout)).toMatchObject({ id: missed.id, status: 'acknowledged', acknowledgedBy: 'operator:carol' });

    const acked = await cli(db, ['report', 'discrepancies', '--status', 'acknowledged', '--kind', 'missed_webhook']);
    expect(acked.stdout.split('\r\n')[0]).toBe(
      'id,kind,status,environment,entity_type,entity_id,external_reference_id,sepa_reference,expected,observed,details,first_detected_at,last_checked_at,resolved_at,amount_cents,amount,currency,acknowledged_by,acknowledged_at,ack_note',
    );
    expect(acked.stdout.split('\r\n')).toHaveLength(3);
    const spreadsheet = await cli(db, ['report', 'discrepancies', '--status', 'all', '--bom', '--delimiter', ';', '--search', 'no-such-reference']);
    expect(spreadsheet.code).toBe(0);
    expect(spreadsheet.stdout).toBe(`\uFEFF${acked.stdout.split('\r\n')[0]!.replaceAll(',', ';')}\r\n`);
    expect((await cli(db, ['report', 'orders', '--delimiter', '|'])).code).toBe(2);
    expect((await cli(db, ['report', 'orders', '--search', 'x'])).code).toBe(2);

    const orders = await cli(db, ['report', 'orders']);
    expect(orders.code).toBe(0);
    expect(orders.stdout.split('\r\n')[0]).toBe('uuid,external_reference_id,api_state,webhook_state,last_event_time,deliveries,open_discrepancies');
    const payouts = await cli(db, ['report', 'payouts', '--format', 'json']);
    expect(JSON.parse(payouts.stdout)).toEqual([]);
  });
});
