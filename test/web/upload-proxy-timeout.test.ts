import type { Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { HttpServer } from '../../src/http/server.js';
import { createTestDatabase, type TestDatabase } from '../helpers/database.js';
import { hasChromium, openPage, type PageUnderTest } from './browser.js';

/**
 * 3629a67: "The Upload view now says [nothing was stored] only on the daemon's error answer; when the
 * answer is lost it says the outcome is not known" (CHANGELOG). web/upload.js takes any ApiError
 * (any non-2xx status) for the daemon's answer. Behind a reverse proxy (TRUSTED_PROXIES), an import
 * that runs longer than the proxy's read timeout (nginx: 60 s; STATEMENT_IMPORT_TIMEOUT_SECONDS may
 * be longer) gets the proxy's 504 Gateway Time-out, an HTML page, while the daemon goes on and
 * stores the file. The page then says "not imported: nothing was stored": not known to be true.
 * The daemon's own error answers are JSON ({ error }); a 502/504 without one is the proxy's.
 */
const TOKEN = 'ada-9d0c7e6b5a4f3e2d1c0b9a8f7e6d5c4b';

let db: TestDatabase;
let ui: PageUnderTest;
let server: HttpServer;
let page: Page;

beforeAll(async () => {
  db = await createTestDatabase('upload_proxy_timeout');
  ui = await openPage(db, { token: TOKEN, settings: { DATABASE_URL: db.url } });
  ({ server, page } = ui);
  await page.goto(server.url);
  await ui.signIn();
}, 120_000);

afterAll(async () => {
  await ui?.close();
});

describe.skipIf(!hasChromium)('an upload answered by a reverse proxy\'s 504 (the daemon still importing)', () => {
  it('does not say that nothing was stored', async () => {
    // The proxy's answer, as nginx writes it when proxy_read_timeout passes.
    await page.route('**/api/**', async (route) => {
      if (route.request().method() !== 'POST') return route.continue();
      await route.fulfill({ status: 504, contentType: 'text/html', body: '<html><head><title>504 Gateway Time-out</title></head><body><center><h1>504 Gateway Time-out</h1></center><hr><center>nginx</center></body></html>' });
    });
    await page.goto(`${server.url}/#upload`);
    await page.waitForSelector('#up-statement-file');
    await page.setInputFiles('#up-statement-file', { name: 'march.sta', mimeType: 'application/octet-stream', buffer: Buffer.from(':20:X\r\n') });
    await page.click('#up-statement button[type="submit"]');
    await page.waitForFunction(() => {
      const t = (globalThis as unknown as { document: { getElementById(id: string): { textContent: string | null } | null } }).document.getElementById('up-statement-result')?.textContent ?? '';
      return t !== '' && !/Uploading/.test(t);
    }, undefined, { timeout: 30_000 });
    const shown = await page.locator('#up-statement-result').innerText();
    expect(shown, 'a proxy\'s 504 proves nothing about what the daemon stored').not.toMatch(/nothing was stored/);
  }, 60_000);
});
