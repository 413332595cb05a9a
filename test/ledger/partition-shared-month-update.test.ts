import { randomUUID } from 'node:crypto';
import { existsSync } from 'node:fs';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { gunzipSync } from 'node:zlib';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ensurePartitions, retirePartitions } from '../../src/ledger/partitions.js';
import { ARCHIVE_COLUMNS } from '../../src/ledger/partition-archive.js';
import { silentLogger } from '../../src/log/logger.js';
import { writeDeliveries } from '../../src/webhooks/ledger-write.js';
import { useTestDatabase, type TestDatabase } from '../helpers/database.js';
import { invoiceDelivery } from '../helpers/deliveries.js';

/**
 * The shared-month path of retirePartitions exports this environment's rows of a month that stays
 * attached, and deletes them in a later transaction, checking only the row COUNT. A stored delivery
 * can be updated meanwhile (reparse re-derives stored deliveries of any month: ledger-rederive.ts
 * updates topic, parse_status, ..., parser_version). The delete then removes a row version the
 * archive does not hold: what the update wrote is in neither the ledger nor the archive. (The
 * whole-month path detaches first, so nothing can change the rows it exports.)
 */
let db: TestDatabase;
useTestDatabase('partition_shared_update', (d) => (db = d));
let dir: string;
beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'bnpl-partition-shared-'));
});
afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
});

describe("a shared month's export and delete", () => {
  it('does not delete a row version the archive does not hold', async () => {
    await ensurePartitions(db.sql, new Date('2029-03-01T00:00:00Z'), 0);
    await writeDeliveries(db.sql, [{ ...invoiceDelivery(randomUUID(), '2029-03-15T10:00:00.000Z'), environment: 'production' }]);
    const [sbx] = await writeDeliveries(db.sql, [invoiceDelivery(randomUUID(), '2029-03-15T11:00:00.000Z')]);
    const file = join(dir, 'webhook_deliveries_p2029_03.sandbox.copy.gz');
    let updated = false;
    // The fence runs at each step; once the archive is written (before the delete's transaction
    // deletes), a reparse commits its update of the delivery, as it could at any moment.
    const fence = async () => {
      if (!updated && existsSync(file)) {
        updated = true;
        await db.sql`update webhook_deliveries set parser_version = 4242 where id = ${sbx!.deliveryId}`;
      }
    };
    const archived = await retirePartitions(db.sql, new Date('2029-06-15T00:00:00Z'), 1, dir, silentLogger(), undefined, fence, undefined, 'sandbox');
    expect(updated).toBe(true);
    const [left] = await db.sql<{ parser_version: number }[]>`select parser_version from webhook_deliveries where id = ${sbx!.deliveryId}`;
    // The export and the delete share one snapshot: the update fails the delete, nothing is deleted
    // and the archive of the rows as they were is removed with it.
    expect(existsSync(file)).toBe(false);
    expect(left?.parser_version).toBe(4242);
    // The next run archives the delivery as it now is, and deletes it.
    const again = await retirePartitions(db.sql, new Date('2029-06-15T01:00:00Z'), 1, dir, silentLogger(), undefined, undefined, undefined, 'sandbox');
    expect(again.map((a) => [a.table, a.rows, a.environment])).toContainEqual(['webhook_deliveries_p2029_03', 1, 'sandbox']);
    const lines = gunzipSync(await readFile(file)).toString('utf8').trim().split('\n');
    const column = ARCHIVE_COLUMNS.indexOf('parser_version');
    const archivedVersion = lines.map((l) => l.split('\t')).find((f) => f[0] === String(sbx!.deliveryId))?.[column];
    // The delivery as last written (parser_version 4242) must be kept somewhere: in the ledger or the archive.
    expect(archivedVersion, `archived ${archived.map((a) => a.table).join(', ')}`).toBe('4242');
    const [gone] = await db.sql<{ n: number }[]>`select count(*)::int as n from webhook_deliveries where id = ${sbx!.deliveryId}`;
    expect(gone!.n).toBe(0);
  });
});
