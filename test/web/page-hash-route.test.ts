import type { Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { HttpServer } from '../../src/http/server.js';
import { createTestDatabase, type TestDatabase } from '../helpers/database.js';
import { hasChromium, openPage, type PageUnderTest } from './browser.js';

/**
 * The page's view comes from the URL's fragment, which a link sent to an operator sets: web/app.js
 * route() looks the name up in a plain object (`VIEWS[name] ? name : 'overview'`), so a name of
 * Object.prototype's (`#constructor`, `#__proto__`, `#toString`) passes the check meant to fall back
 * to the overview. Every view is hidden then: the signed-in operator sees a blank page.
 */
const TOKEN = 'ada-1f2e3d4c5b6a79880a1b2c3d4e5f6a7b';

let db: TestDatabase;
let ui: PageUnderTest;
let server: HttpServer;
let page: Page;

beforeAll(async () => {
  db = await createTestDatabase('page_hash_route');
  ui = await openPage(db, { token: TOKEN });
  ({ server, page } = ui);
}, 120_000);

afterAll(async () => {
  await ui?.close();
});

describe.skipIf(!hasChromium)('a link naming no view', () => {
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
