import { existsSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { chromium, type BrowserContext, type Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadConfig } from '../../src/config/load.js';
import { operatorRoutes } from '../../src/http/operator-api.js';
import { pageRoutes } from '../../src/http/page.js';
import { startHttpServer, type HttpServer } from '../../src/http/server.js';
import { silentLogger } from '../../src/log/logger.js';
import { createTestDatabase, type TestDatabase } from '../helpers/database.js';
import { waitFor } from '../helpers/wait.js';
import { invoiceEvent } from '../statements/fixtures.js';

/**
 * docs/page.md: a picked day ("First detected since", "Invoiced since") is that day in the zone the
 * page shows times in (DISPLAY_TIME_ZONE), not the UTC day. An accountant in Berlin (the browser's
 * zone and DISPLAY_TIME_ZONE both Europe/Berlin) picks 2026-12-01: a finding of 00:30 that morning
 * (23:30 UTC the day before) is in, one of 23:30 the evening before is out. Seeded straight into the
 * ledger on both sides of Berlin's midnight and of UTC's.
 */
const CHROMIUM = '/usr/bin/chromium';
const ARGS = ['--headless', '--no-sandbox', '--disable-gpu', '--no-first-run', '--disable-background-networking', '--disable-component-update', '--disable-sync'];
const TOKEN = 'ada-5d2e8c1f9a7b4e3d6c0f1a2b3c4d5e6f';
// Berlin is UTC+1 in December.
const BEFORE_BERLIN_MIDNIGHT = '2026-11-30T22:30:00Z'; // 30 Nov 23:30 in Berlin
const AFTER_BERLIN_MIDNIGHT = '2026-11-30T23:30:00Z'; // 1 Dec 00:30 in Berlin
const LATER_THAT_DAY = '2026-12-01T09:00:00Z'; // 1 Dec 10:00 in Berlin

let db: TestDatabase;
let berlin: HttpServer;
let utc: HttpServer;
let context: BrowserContext;
let page: Page;
let profile: string;
const ids: Record<string, string> = {};

async function operatorServer(env: Record<string, string>): Promise<HttpServer> {
  const config = loadConfig({ OPERATOR_TOKENS: `ada:${TOKEN}`, PROVIDER_ENV: 'sandbox', ...env });
  const log = silentLogger();
  return startHttpServer({ host: '127.0.0.1', port: 0, log, name: 'operator', routes: [...operatorRoutes({ config, database: db, log }), ...pageRoutes()] });
}

async function signIn(url: string): Promise<void> {
  await page.goto(url);
  await page.fill('#token', TOKEN);
  await page.keyboard.press('Enter');
  await page.waitForSelector('#who');
}

/** Picks the day in the discrepancies filter; the since parameter the page sent and the ids it shows. */
async function discrepanciesSince(day: string): Promise<{ since: string | null; shown: string[] }> {
  await page.click('a[data-view="discrepancies"]');
  await page.fill('#f-since', day);
  const [answer] = await Promise.all([
    page.waitForResponse((r) => r.url().includes('/api/discrepancies?') && new URL(r.url()).searchParams.has('since')),
    page.click('#filters button[type="submit"]'),
  ]);
  expect(answer.status()).toBe(200);
  const rows = ((await answer.json()) as unknown[]).length;
  await waitFor('the answer shown', async () => ((await page.innerText('#disc-count')).startsWith(`${rows} discrepanc`) ? true : undefined), 15_000);
  const shown = rows === 0 ? [] : await page.locator('#disc tbody tr td:first-child').allInnerTexts();
  return { since: new URL(answer.url()).searchParams.get('since'), shown: shown.sort() };
}

beforeAll(async () => {
  db = await createTestDatabase('web_date_filter');
  for (const [name, at] of Object.entries({ before: BEFORE_BERLIN_MIDNIGHT, after: AFTER_BERLIN_MIDNIGHT, later: LATER_THAT_DAY })) {
    const [row] = await db.sql<{ id: string }[]>`
      insert into discrepancies (environment, kind, status, entity_type, entity_id, subject, details, first_detected_at)
      values ('sandbox', 'missed_webhook', 'open', 'order', gen_random_uuid()::text, '', 'A sentence.', ${at}::timestamptz)
      returning id::text`;
    ids[name] = row!.id;
    await invoiceEvent(db, `INV-${name}`, at);
  }
  berlin = await operatorServer({ DISPLAY_TIME_ZONE: 'Europe/Berlin' });
  utc = await operatorServer({});
  profile = await mkdtemp(path.join(tmpdir(), 'chromium-date-filter-'));
  context = await chromium.launchPersistentContext(profile, { executablePath: CHROMIUM, args: ARGS, headless: true, timezoneId: 'Europe/Berlin', locale: 'de-DE' });
  page = context.pages()[0] ?? (await context.newPage());
}, 120_000);

afterAll(async () => {
  await context?.close();
  if (profile) await rm(profile, { recursive: true, force: true });
  await berlin?.close();
  await utc?.close();
});

describe.skipIf(!existsSync(CHROMIUM))('the page\'s day filters in Chromium, the browser in Europe/Berlin', () => {
  it('"First detected since" 2026-12-01 asks for Berlin\'s midnight and shows the findings of that Berlin day on', async () => {
    await signIn(berlin.url);
    expect(await page.evaluate('Intl.DateTimeFormat().resolvedOptions().timeZone')).toBe('Europe/Berlin');
    const { since, shown } = await discrepanciesSince('2026-12-01');
    expect(since).toBe('2026-12-01T00:00:00+01:00');
    expect(shown).toEqual([ids.after, ids.later].sort());
    // The day shown beside each row is the day picked.
    expect(await page.locator('#disc tbody tr td:nth-child(7)').allInnerTexts()).toEqual(expect.arrayContaining([expect.stringMatching(/^01\.12\.2026, 00:30/)]));
  });

  it('a summer day asks for midnight in summer time (+02:00)', async () => {
    const { since } = await discrepanciesSince('2027-07-01');
    expect(since).toBe('2027-07-01T00:00:00+02:00');
  });

  it('"Invoiced since" 2026-12-01 keeps the invoices of that Berlin day on', async () => {
    await page.click('a[data-view="invoices"]');
    await waitFor('the invoices', async () => ((await page.innerText('#invoices-count')).startsWith('3 of 3 loaded') ? true : undefined), 15_000);
    await page.fill('#inv-since', '2026-12-01');
    // The filter applies to the loaded rows in the page, at once.
    await page.click('#inv-filters button[type="submit"]');
    expect((await page.locator('#invoices tbody tr td:first-child').allInnerTexts()).sort()).toEqual(['INV-after', 'INV-later']);
  });

  it('with DISPLAY_TIME_ZONE unset (UTC), the day is the UTC day the page shows its times in', async () => {
    await signIn(utc.url);
    const { since, shown } = await discrepanciesSince('2026-12-01');
    expect(since).toBe('2026-12-01T00:00:00+00:00');
    expect(shown).toEqual([ids.later]);
  });
});
