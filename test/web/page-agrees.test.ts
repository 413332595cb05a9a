import { existsSync } from 'node:fs';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { randomUUID, createHash } from 'node:crypto';
import { parse } from 'csv-parse/sync';
import { chromium, type BrowserContext, type Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadConfig } from '../../src/config/load.js';
import { operatorRoutes } from '../../src/http/operator-api.js';
import { pageRoutes } from '../../src/http/page.js';
import { startHttpServer, type HttpServer } from '../../src/http/server.js';
import { silentLogger } from '../../src/log/logger.js';
import { createTestDatabase, type TestDatabase } from '../helpers/database.js';
import { waitFor } from '../helpers/wait.js';

/**
 * The accountants' page against findings seeded straight into the ledger: amounts of every kind as
 * money, a download that saves the list shown, the invoice filter agreeing with the ageing above it.
 * Browser in de-DE, so 55.629,31 € is how an amount must read.
 */
const CHROMIUM = '/usr/bin/chromium';
const ARGS = ['--headless', '--no-sandbox', '--disable-gpu', '--no-first-run', '--disable-background-networking', '--disable-component-update', '--disable-sync'];
const TOKEN = 'ada-9f8e7d6c5b4a39281706f5e4d3c2b1a0';

let db: TestDatabase;
let server: HttpServer;
let context: BrowserContext;
let page: Page;
let profile: string;
let unbalancedId = '';

async function signIn(): Promise<void> {
  await page.goto(server.url);
  await page.fill('#token', TOKEN);
  await page.keyboard.press('Enter');
  await page.waitForSelector('#who:not([hidden])');
}

beforeAll(async () => {
  db = await createTestDatabase('web_page_agrees');
  // statement_unbalanced as statements/import.ts recordUnbalanced writes it: expected the closing
  // balance, observed the computed one, both in cents.
  const [u] = await db.sql<{ id: string }[]>`
    insert into discrepancies (environment, kind, status, entity_type, entity_id, subject, expected, observed, details, evidence, first_detected_at)
    values ('sandbox', 'statement_unbalanced', 'open', 'statement', '1', '0', '5562931', '5562831',
            'march.sta: statement 7 does not balance (difference 1.00)',
            ${JSON.stringify({ statement_id: 1, section_index: 0, currency: 'EUR', closing_cents: '5562931', opening_cents: '5000000', credit_cents: '562831', debit_cents: '0', difference_cents: '100' })}::jsonb,
            now() - interval '1 hour')
    returning id::text`;
  unbalancedId = u!.id;
  // Three open findings and two resolved ones.
  for (const status of ['open', 'open', 'open', 'resolved', 'resolved']) {
    await db.sql`
      insert into discrepancies (environment, kind, status, entity_type, entity_id, subject, details, first_detected_at, resolved_at)
      values ('sandbox', 'missed_webhook', ${status}::discrepancy_status, 'order', gen_random_uuid()::text, '', 'A sentence.', now() - interval '2 hours',
              ${status === 'resolved' ? new Date().toISOString() : null}::timestamptz)`;
  }
  // An invoice whose factoring the provider declined: it will not be paid out (reports/invoices.ts
  // ageingSource leaves it out of "not yet paid out").
  const uuid = randomUUID();
  await db.sql`
    insert into invoice_events (environment, event_key, topic, received_at, invoice_uuid, external_reference_id)
    values ('sandbox', ${createHash('sha256').update(uuid).digest('hex')}, 'invoice/created', now() - interval '3 days', ${uuid}, 'INV-DECLINED')`;
  await db.sql`
    insert into factoring_events (environment, event_key, topic, received_at, factoring_uuid, invoice_external_reference_id)
    values ('sandbox', ${createHash('sha256').update(`f-${uuid}`).digest('hex')}, 'factoring/declined', now() - interval '2 days', ${randomUUID()}, 'INV-DECLINED')`;

  const config = loadConfig({ OPERATOR_TOKENS: `ada:${TOKEN}`, PROVIDER_ENV: 'sandbox' });
  const log = silentLogger();
  server = await startHttpServer({ host: '127.0.0.1', port: 0, log, name: 'operator', routes: [...operatorRoutes({ config, database: db, log }), ...pageRoutes()] });
  profile = await mkdtemp(path.join(tmpdir(), 'chromium-zz-pageops-'));
  context = await chromium.launchPersistentContext(profile, { executablePath: CHROMIUM, args: ARGS, headless: true, locale: 'de-DE', acceptDownloads: true });
  page = context.pages()[0] ?? (await context.newPage());
  await signIn();
}, 120_000);

afterAll(async () => {
  await context?.close();
  if (profile) await rm(profile, { recursive: true, force: true });
  await server?.close();
});

describe.skipIf(!existsSync(CHROMIUM))('the page shows what it says', () => {
  it('statement_unbalanced evidence shows the closing and computed balances as money, not as raw cents', async () => {
    await page.click('a[data-view="discrepancies"]');
    await waitFor('the list', async () => ((await page.innerText('#disc-count')).startsWith('4 discrepanc') ? true : undefined), 15_000);
    await page.click(`button[aria-label="Open evidence of discrepancy ${unbalancedId}"]`);
    await page.waitForSelector('#evidence[open] dl.facts');
    // A string: the tests are compiled without the DOM's types.
    const facts = (await page.evaluate(
      "Object.fromEntries([...document.querySelectorAll('#evidence dl.facts dt')].map((dt) => [dt.textContent ?? '', dt.nextElementSibling?.textContent ?? '']))",
    )) as Record<string, string>;
    await page.click('#evidence-close');
    // 5562931 cents is 55.629,31 € under de-DE; a person must not read "5562931".
    expect(facts.Expected).toMatch(/55\.629,31\s€/);
    expect(facts.Observed).toMatch(/55\.628,31\s€/);
  });

  it('Download CSV saves the list that is shown, not a filter edited in the form but not applied', async () => {
    await page.click('a[data-view="discrepancies"]');
    await page.selectOption('#f-status', 'open');
    await page.click('#filters button[type="submit"]');
    await waitFor('the open list', async () => ((await page.innerText('#disc-count')).startsWith('4 discrepanc') ? true : undefined), 15_000);
    const shown = (await page.locator('#disc tbody tr td:first-child').allInnerTexts()).sort();
    // The accountant picks another status but does not apply it: the table still shows the open ones.
    await page.selectOption('#f-status', 'all');
    const [download] = await Promise.all([page.waitForEvent('download'), page.click('#dl-csv')]);
    const file = await download.path();
    const rows = parse((await readFile(file!, 'utf8')).replace(/^\uFEFF/, ''), { columns: true }) as { id: string }[];
    expect((await page.locator('#disc tbody tr td:first-child').allInnerTexts()).sort()).toEqual(shown);
    expect(rows.map((r) => r.id).sort()).toEqual(shown);
  });

  it('"Not yet paid out" lists the same invoices the ageing above it counts (a declined invoice in neither)', async () => {
    await page.click('a[data-view="invoices"]');
    await waitFor('the invoices', async () => ((await page.innerText('#invoices-count')).includes('1 loaded') ? true : undefined), 15_000);
    await waitFor('the ageing', async () => ((await page.locator('#ageing tbody tr').count()) === 5 ? true : undefined), 15_000);
    const ageingTotal = (await page.locator('#ageing tbody tr:last-child td:nth-child(2)').innerText()).trim();
    await page.selectOption('#inv-state', 'waiting');
    await page.click('#inv-filters button[type="submit"]');
    const count = await page.innerText('#invoices-count');
    expect(ageingTotal).toBe('0');
    expect(count).toMatch(/^0 of 1 loaded/);
  });
});
