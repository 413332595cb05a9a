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

/**
 * The discrepancies view in Chromium. "Load more" continues the list that is shown, with
 * the filters that list was loaded with, whatever the filter form holds meanwhile. More than one
 * page (500 rows) of two kinds is seeded straight into the ledger.
 */
const CHROMIUM = '/usr/bin/chromium';
const ARGS = ['--headless', '--no-sandbox', '--disable-gpu', '--no-first-run', '--disable-background-networking', '--disable-component-update', '--disable-sync'];
const TOKEN = 'ada-4c1f0e9b7d2a4e6f8a0b1c2d3e4f5a6b';
const PER_KIND = 520;

let db: TestDatabase;
let server: HttpServer;
let context: BrowserContext;
let page: Page;
let profile: string;

beforeAll(async () => {
  db = await createTestDatabase('web_paging');
  // Interleaved ids, so a cursor of one kind's list also points into the other's.
  await db.sql`
    insert into discrepancies (environment, kind, status, entity_type, entity_id, subject, details, first_detected_at)
    select 'sandbox', case when n % 2 = 0 then 'missed_webhook' else 'orphan_webhook' end::discrepancy_kind, 'open', 'order',
           gen_random_uuid()::text, '', 'A sentence.', now()
    from generate_series(1, ${2 * PER_KIND}) as n`;
  const config = loadConfig({ OPERATOR_TOKENS: `ada:${TOKEN}`, PROVIDER_ENV: 'sandbox' });
  const log = silentLogger();
  server = await startHttpServer({ host: '127.0.0.1', port: 0, log, name: 'operator', routes: [...operatorRoutes({ config, database: db, log }), ...pageRoutes()] });
  profile = await mkdtemp(path.join(tmpdir(), 'chromium-paging-'));
  context = await chromium.launchPersistentContext(profile, { executablePath: CHROMIUM, args: ARGS, headless: true });
  page = context.pages()[0] ?? (await context.newPage());
}, 120_000);

afterAll(async () => {
  await context?.close();
  if (profile) await rm(profile, { recursive: true, force: true });
  await server?.close();
});

const kindsShown = async () => new Set(await page.locator('#disc tbody tr td:nth-child(2)').allInnerTexts());

describe.skipIf(!existsSync(CHROMIUM))('the discrepancies view in Chromium: paging through one list, a token refused mid-way', () => {
  it('Load more continues the filter the rows were loaded with, not the form edited since', async () => {
    await page.goto(server.url);
    await page.fill('#token', TOKEN);
    await page.keyboard.press('Enter');
    await page.waitForSelector('#who');
    await page.click('a[data-view="discrepancies"]');
    await page.selectOption('#f-kind', 'missed_webhook');
    await page.click('#filters button[type="submit"]');
    await waitFor('the first page of missed webhooks', async () => ((await page.locator('#disc tbody tr').count()) === 500
      && [...(await kindsShown())].join() === 'missed webhook' ? true : undefined), 15_000);
    expect(await page.isVisible('#disc-more')).toBe(true);

    // The accountant picks another kind but has not applied it yet, then asks for the rest.
    await page.selectOption('#f-kind', 'orphan_webhook');
    await page.click('#disc-more');
    await waitFor('the rest of the list', async () => ((await page.locator('#disc tbody tr').count()) > 500 ? true : undefined), 15_000);
    expect(await page.locator('#disc tbody tr').count()).toBe(PER_KIND);
    expect([...(await kindsShown())]).toEqual(['missed webhook']);
    expect(await page.isVisible('#disc-more')).toBe(false);
    expect(await page.innerText('#disc-count')).toBe(`${PER_KIND} discrepancies shown.`);
  });

  it('Load more clicked twice while its page is on the way adds that page once', async () => {
    await page.selectOption('#f-kind', '');
    await page.click('#filters button[type="submit"]');
    await waitFor('the first page of all kinds', async () => ((await page.locator('#disc tbody tr').count()) === 500
      && (await kindsShown()).size === 2 ? true : undefined), 15_000);
    // A slow network: the next page's answer takes half a second.
    await page.route(/\/api\/discrepancies\?.*cursor=/, async (route) => {
      await new Promise((resolve) => setTimeout(resolve, 500));
      await route.continue();
    });
    await page.click('#disc-more');
    await page.click('#disc-more');
    await waitFor('the second page', async () => ((await page.locator('#disc tbody tr').count()) >= 1000 ? true : undefined), 15_000);
    await new Promise((resolve) => setTimeout(resolve, 1000));
    await page.unroute(/\/api\/discrepancies\?.*cursor=/);
    const ids = await page.locator('#disc tbody tr td:first-child').allInnerTexts();
    expect(ids).toHaveLength(1000);
    expect(new Set(ids).size).toBe(1000);
    expect(await page.innerText('#disc-count')).toBe('1000 discrepancies shown, more to load.');
  });

  it('a token refused while a finding\'s evidence is open closes the dialog and shows the sign-in form', async () => {
    await page.locator('#disc tbody tr button.open').first().click();
    await page.waitForSelector('dialog#evidence[open]');
    // The token stops being accepted (rotated on the server): the next call answers 401.
    await page.evaluate(`sessionStorage.setItem('bnpl-recon-token', 'revoked-0123456789abcdef0123')`);
    await page.getByLabel('Note (why this is acknowledged)').fill('Checked with the provider.');
    await page.getByRole('button', { name: 'Acknowledge', exact: true }).click();
    await waitFor('the sign-in form', async () => ((await page.isVisible('#sign-in')) ? true : undefined), 10_000);
    expect(await page.locator('dialog#evidence[open]').count()).toBe(0);
    expect(await page.innerText('#sign-in-error')).toContain('Sign in again');
    // Reachable: the token field takes the keyboard's focus and a good token signs in again.
    await page.fill('#token', TOKEN);
    await page.keyboard.press('Enter');
    await page.waitForSelector('#who');
    expect(await db.sql`select 1 from discrepancy_history where to_status = 'acknowledged'`).toHaveLength(0);
  });
});
