import { existsSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { chromium, type BrowserContext, type Page } from 'playwright-core';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { loadConfig } from '../../src/config/load.js';
import { operatorRoutes } from '../../src/http/operator-api.js';
import { pageRoutes } from '../../src/http/page.js';
import { startHttpServer, type HttpServer } from '../../src/http/server.js';
import { silentLogger } from '../../src/log/logger.js';
import { createTestDatabase, type TestDatabase } from '../helpers/database.js';
import { waitFor } from '../helpers/wait.js';

/**
 * The accountants' page (web/) under clicks that race their answers, and answers that fail, in
 * Debian's Chromium against the real operator API over a real Postgres. The ledger is
 * "held" the way docs/http-api.md describes (a lock another session holds: a migration, VACUUM FULL)
 * with the API's own deadline shortened through operatorRoutes' ledgerDeadlineMs.
 */
const CHROMIUM = '/usr/bin/chromium';
const ARGS = ['--headless', '--no-sandbox', '--disable-gpu', '--no-first-run', '--disable-background-networking', '--disable-component-update', '--disable-sync'];
const TOKEN = 'ada-pageraces0123456789abcdef0123456';
const DEADLINE_MS = 3000;
const MANY = 520;

let db: TestDatabase;
let server: HttpServer;
let context: BrowserContext;
let page: Page;
let profile = '';
let orderFinding = '';
let invoiceFinding = '';
let ackFinding = '';
let keyboardFinding = '';
let filterAckFinding = '';

/** Holds an ACCESS EXCLUSIVE lock on `table` from another session until the returned function is called. */
async function holdLock(table: string): Promise<() => Promise<void>> {
  const reserved = await db.sql.reserve();
  await reserved`begin`;
  await reserved.unsafe(`lock table ${table} in access exclusive mode`);
  return async () => {
    await reserved`rollback`;
    reserved.release();
  };
}

async function signIn(): Promise<void> {
  if (page.url().startsWith(server.url) && (await page.isVisible('#who'))) return;
  await page.goto(`${server.url}/#upload`);
  await page.fill('#token', TOKEN);
  await page.keyboard.press('Enter');
  await page.waitForSelector('#who:not([hidden])');
}

async function showView(view: string): Promise<void> {
  await page.click(`a[data-view="${view}"]`);
  await page.waitForSelector(`#view-${view}:not([hidden])`);
}

beforeAll(async () => {
  db = await createTestDatabase('page_races', { poolMax: 10 });
  const { sql } = db;
  // Three open findings: one about an order (its evidence reads the poller's tables), one about an
  // invoice (it does not), one to acknowledge.
  const rows = await sql<{ id: string; entity_type: string }[]>`
    insert into discrepancies (environment, kind, status, entity_type, entity_id, subject, details, first_detected_at)
    values ('sandbox', 'missed_webhook', 'open', 'order', gen_random_uuid()::text, '', 'Order finding.', now() - interval '3 hours'),
           ('sandbox', 'invoice_not_paid_out', 'open', 'invoice', gen_random_uuid()::text, '', 'Invoice finding.', now() - interval '2 hours'),
           ('sandbox', 'orphan_webhook', 'open', 'order', gen_random_uuid()::text, '', 'To acknowledge.', now() - interval '1 hour'),
           ('sandbox', 'orphan_webhook', 'open', 'order', gen_random_uuid()::text, '', 'To acknowledge by keyboard.', now() - interval '1 hour'),
           ('sandbox', 'orphan_webhook', 'open', 'order', gen_random_uuid()::text, '', 'To acknowledge under edited filters.', now() - interval '1 hour'),
           ('sandbox', 'statement_credit_without_payout', 'open', 'statement_line', 'STL-0001', '', 'A credit no payout names.', now() - interval '1 hour')
    returning id::text, entity_type::text`;
  orderFinding = rows[0]!.id;
  invoiceFinding = rows[1]!.id;
  ackFinding = rows[2]!.id;
  keyboardFinding = rows[3]!.id;
  filterAckFinding = rows[4]!.id;
  // More than one page (500) of invoices and of payouts.
  await sql`
    insert into invoice_events (environment, event_key, topic, received_at, invoice_uuid, external_reference_id)
    select 'sandbox', md5('inv-' || n), 'invoice/created', now() - interval '3 days', gen_random_uuid(), 'INV-' || lpad(n::text, 5, '0')
    from generate_series(1, ${MANY}) as n`;
  await sql`
    insert into payout_events (environment, event_key, topic, received_at, payout_uuid, status, sepa_instruction_id, amount_cents,
                               external_reference_ids, event_time, event_time_sortable)
    select 'sandbox', md5('po-' || n), 'payout/complete', now() - interval '2 days', gen_random_uuid(), 'complete',
           'PO' || lpad(n::text, 16, '0'), 10000 + n, '{}', null, null
    from generate_series(1, ${MANY}) as n`;
  const config = loadConfig({ OPERATOR_TOKENS: `ada:${TOKEN}`, PROVIDER_ENV: 'sandbox' });
  const log = silentLogger();
  server = await startHttpServer({
    host: '127.0.0.1', port: 0, log, name: 'operator',
    routes: [...operatorRoutes({ config, database: db, log, ledgerDeadlineMs: DEADLINE_MS }), ...pageRoutes()],
  });
  profile = await mkdtemp(path.join(tmpdir(), 'chromium-page-races-'));
  context = await chromium.launchPersistentContext(profile, { executablePath: CHROMIUM, args: ARGS, headless: true, locale: 'en-GB' });
  page = context.pages()[0] ?? (await context.newPage());
}, 120_000);

afterAll(async () => {
  await context?.close();
  if (profile) await rm(profile, { recursive: true, force: true });
  await server?.close();
  // The database is dropped by the isolation setup (test/helpers/database.ts).
});

describe.skipIf(!existsSync(CHROMIUM))('the page when clicks race their answers and answers fail, in Chromium', () => {
  // Each test starts with the evidence dialog closed, whatever the one before left.
  afterEach(async () => {
    await page.evaluate(`(() => { const d = document.getElementById('evidence'); if (d && d.open) d.close(); })()`);
  });

  it('Invoices: Load more clicked twice while its page is on the way adds that page once', async () => {
    await signIn();
    await showView('invoices');
    await expect.poll(() => page.locator('#invoices tbody tr').count(), { timeout: 15_000 }).toBe(500);
    // Two clicks before the first page answers (a double click).
    await page.evaluate(`(() => { const more = document.getElementById('invoices-more'); more.click(); more.click(); })()`);
    await page.waitForSelector('#invoices-more', { state: 'hidden' });
    await page.waitForTimeout(500);
    const refs = await page.locator('#invoices tbody tr td:first-child').allInnerTexts();
    expect({ rows: refs.length, distinct: new Set(refs).size }).toEqual({ rows: MANY, distinct: MANY });
    expect(await page.innerText('#invoices-count')).toBe(`${MANY} of ${MANY} loaded invoices shown.`);
  });

  it('Payouts: Load more clicked twice while its page is on the way adds that page once', async () => {
    await showView('payouts');
    await expect.poll(() => page.locator('#payouts tbody tr').count(), { timeout: 15_000 }).toBe(500);
    await page.evaluate(`(() => { const more = document.getElementById('payouts-more'); more.click(); more.click(); })()`);
    await page.waitForSelector('#payouts-more', { state: 'hidden' });
    await page.waitForTimeout(500);
    const refs = await page.locator('#payouts tbody tr td:first-child').allInnerTexts();
    expect({ rows: refs.length, distinct: new Set(refs).size }).toEqual({ rows: MANY, distinct: MANY });
    expect(await page.innerText('#payouts-count')).toBe(`${MANY} payouts shown.`);
  });

  it("Open on a finding while the ledger is held (503): the page says the evidence could not be loaded", async () => {
    await showView('discrepancies');
    await page.waitForSelector(`#disc tbody tr:nth-child(3)`);
    const release = await holdLock('statement_lines');
    try {
      await page.getByRole('button', { name: `Open evidence of discrepancy ${orderFinding}`, exact: true }).click();
      await page.waitForTimeout(DEADLINE_MS + 1500);
    } finally {
      await release();
    }
    // The API answered 503 {"error":"database unavailable; retry"}: something on the page must say so.
    const text = await page.innerText('body');
    expect(text).toContain('database unavailable');
  });

  it('the evidence shown is the finding clicked last, not the one whose answer came last', async () => {
    // The order finding's evidence reads order_snapshots, held for a moment; the invoice finding's does not.
    const release = await holdLock('order_snapshots');
    try {
      await page.getByRole('button', { name: `Open evidence of discrepancy ${orderFinding}`, exact: true }).click();
      await page.waitForTimeout(200);
      await page.getByRole('button', { name: `Open evidence of discrepancy ${invoiceFinding}`, exact: true }).click();
      await page.waitForSelector('dialog#evidence[open]');
      expect(await page.innerText('#evidence-title')).toContain(`Discrepancy ${invoiceFinding}:`);
      await page.waitForTimeout(500);
    } finally {
      await release();
    }
    await page.waitForTimeout(1000);
    expect(await page.innerText('#evidence-title')).toContain(`Discrepancy ${invoiceFinding}:`);
    await page.keyboard.press('Escape');
  });

  it('an acknowledgement the API recorded is not reported as "Not acknowledged" when the list reload after it fails', async () => {
    await page.getByRole('button', { name: `Open evidence of discrepancy ${ackFinding}`, exact: true }).click();
    await page.waitForSelector('dialog#evidence[open]');
    await page.getByLabel('Note (why this is acknowledged)').fill('Test order, not ours.');
    const release = await holdLock('statement_lines');
    try {
      await page.getByRole('button', { name: 'Acknowledge', exact: true }).click();
      await waitFor('the acknowledgement recorded', async () => {
        const [row] = await db.sql`select status from discrepancies where id = ${ackFinding} and status = 'acknowledged'`;
        return row;
      }, 10_000);
      await page.waitForTimeout(DEADLINE_MS + 1500);
    } finally {
      await release();
    }
    const said = await page.innerText('#evidence-body');
    expect(said).not.toContain('Not acknowledged');
    await page.keyboard.press('Escape');
  });

  it('a "Could not load" error does not stay on a view once it has loaded', async () => {
    await showView('upload');
    const release = await holdLock('statement_lines');
    try {
      await page.click('a[data-view="discrepancies"]');
      await page.waitForSelector('#view-discrepancies p.error[role="alert"]', { timeout: DEADLINE_MS + 5000 });
    } finally {
      await release();
    }
    await showView('upload');
    await showView('discrepancies');
    await page.waitForSelector('#disc-count:has-text("shown")');
    await page.waitForTimeout(500);
    const errors = await page.locator('#view-discrepancies p.error').allInnerTexts();
    expect(errors).toEqual([]);
  });

  it('keyboard: after acknowledging and closing the evidence, focus is not dropped to the top of the page', async () => {
    await signIn();
    await showView('discrepancies');
    await page.selectOption('#f-status', 'all');
    // The list drawn again with the filter applied, before a button of it is focused.
    await Promise.all([page.waitForResponse((r) => r.url().includes('/api/discrepancies?') && r.url().includes('status=all')), page.click('#filters button[type="submit"]')]);
    await page.waitForTimeout(300);
    const open = page.getByRole('button', { name: `Open evidence of discrepancy ${keyboardFinding}`, exact: true });
    await open.focus();
    await page.keyboard.press('Enter');
    await page.waitForSelector('dialog#evidence[open]');
    await page.getByLabel('Note (why this is acknowledged)').focus();
    await page.keyboard.type('Checked with the provider.');
    await page.keyboard.press('Tab');
    await page.keyboard.press('Enter');
    await page.waitForSelector('#ack-shown');
    await page.keyboard.press('Escape');
    await page.waitForSelector('dialog#evidence:not([open])', { state: 'attached' });
    const focused = await page.evaluate(`(() => {
      const a = document.activeElement;
      return a === null || a === document.body ? 'body' : a.tagName + ' ' + (a.getAttribute('aria-label') || a.textContent || '');
    })()`);
    expect(focused).toBe(`BUTTON Open evidence of discrepancy ${keyboardFinding}`);
  });
  it('the Reference column sorts by what it shows: a statement line finding by its line', async () => {
    await signIn();
    await showView('discrepancies');
    await page.selectOption('#f-status', 'all');
    await Promise.all([page.waitForResponse((r) => r.url().includes('/api/discrepancies?') && r.url().includes('status=all')), page.click('#filters button[type="submit"]')]);
    await page.getByRole('button', { name: 'Reference', exact: true }).click();
    // The only row showing a reference comes first in ascending order; the empty ones after it.
    expect(await page.locator('#disc tbody tr:first-child td:nth-child(4)').innerText()).toBe('STL-0001');
  });

  it('after acknowledging, the list keeps the filters it was shown with, not edits not yet applied', async () => {
    await signIn();
    await showView('discrepancies');
    await page.selectOption('#f-status', 'all');
    await Promise.all([page.waitForResponse((r) => r.url().includes('/api/discrepancies?') && r.url().includes('status=all')), page.click('#filters button[type="submit"]')]);
    const shown = await page.innerText('#disc-count');
    expect(shown).toMatch(/^\d+ discrepancies shown\.$/);
    // Edited, not applied: a kind no finding has.
    await page.selectOption('#f-kind', 'duplicate_delivery');
    await page.getByRole('button', { name: `Open evidence of discrepancy ${filterAckFinding}`, exact: true }).click();
    await page.waitForSelector('dialog#evidence[open]');
    await page.getByLabel('Note (why this is acknowledged)').fill('Known test order.');
    await page.getByRole('button', { name: 'Acknowledge', exact: true }).click();
    await page.waitForSelector('#ack-shown');
    await page.keyboard.press('Escape');
    expect(await page.innerText('#disc-count')).toBe(shown);
    await page.selectOption('#f-kind', '');
  });
});
