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

/**
 * The page's view comes from the URL's fragment, which a link sent to an operator sets: web/app.js
 * route() looks the name up in a plain object (`VIEWS[name] ? name : 'overview'`), so a name of
 * Object.prototype's (`#constructor`, `#__proto__`, `#toString`) passes the check meant to fall back
 * to the overview. Every view is hidden then: the signed-in operator sees a blank page.
 */
const CHROMIUM = '/usr/bin/chromium';
const ARGS = ['--headless', '--no-sandbox', '--disable-gpu', '--no-first-run', '--disable-background-networking', '--disable-component-update', '--disable-sync'];
const TOKEN = 'ada-1f2e3d4c5b6a79880a1b2c3d4e5f6a7b';

let db: TestDatabase;
let server: HttpServer;
let context: BrowserContext;
let page: Page;
let profile: string;

beforeAll(async () => {
  db = await createTestDatabase('page_hash_route');
  const config = loadConfig({ OPERATOR_TOKENS: `ada:${TOKEN}`, PROVIDER_ENV: 'sandbox' });
  const log = silentLogger();
  server = await startHttpServer({ host: '127.0.0.1', port: 0, log, name: 'operator', routes: [...operatorRoutes({ config, database: db, log }), ...pageRoutes()] });
  profile = await mkdtemp(path.join(tmpdir(), 'chromium-hash-route-'));
  context = await chromium.launchPersistentContext(profile, { executablePath: CHROMIUM, args: ARGS, headless: true });
  page = context.pages()[0] ?? (await context.newPage());
}, 120_000);

afterAll(async () => {
  await context?.close();
  if (profile) await rm(profile, { recursive: true, force: true });
  await server?.close();
});

describe.skipIf(!existsSync(CHROMIUM))('a link naming no view', () => {
  for (const name of ['no-such-view', 'constructor', '__proto__', 'toString']) {
    it(`#${name} shows the overview, as an unknown view name should`, async () => {
      await page.goto(`${server.url}/#${name}`);
      await page.evaluate('sessionStorage.clear()');
      await page.reload();
      await page.fill('#token', TOKEN);
      await page.keyboard.press('Enter');
      await page.waitForSelector('#who');
      await page.waitForTimeout(300);
      const visible = (await page.evaluate("[...document.querySelectorAll('section.view')].filter((s) => !s.hidden).map((s) => s.id)")) as string[];
      expect(visible, `after signing in at #${name}, the views shown are ${JSON.stringify(visible)}`).toEqual(['view-overview']);
    }, 30_000);
  }
});
