import { existsSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { chromium, type BrowserContext, type Page } from 'playwright-core';
import { loadConfig } from '../../src/config/load.js';
import { operatorRoutes } from '../../src/http/operator-api.js';
import { pageRoutes } from '../../src/http/page.js';
import { startHttpServer, type HttpServer } from '../../src/http/server.js';
import { silentLogger } from '../../src/log/logger.js';
import type { TestDatabase } from '../helpers/database.js';

/** Debian's Chromium, which the page tests drive through playwright-core (.ci/run installs it). */
export const CHROMIUM = '/usr/bin/chromium';
export const hasChromium = existsSync(CHROMIUM);
// As a root machine with a closed network needs it: no sandbox, no background connections.
const ARGS = ['--headless', '--no-sandbox', '--disable-gpu', '--no-first-run', '--disable-background-networking', '--disable-component-update', '--disable-sync'];

export interface PageUnderTest {
  server: HttpServer;
  context: BrowserContext;
  page: Page;
  /** Signs in at the page's form with the operator token and waits for the signed-in header. */
  signIn(): Promise<void>;
  close(): Promise<void>;
}

/**
 * The operator API and the page served over `db` on a loopback port, as `start` serves them, and a
 * fresh Chromium profile on it. `settings` are added to OPERATOR_TOKENS (operator `ada`) and
 * PROVIDER_ENV sandbox.
 */
export async function openPage(db: TestDatabase, o: { token: string; settings?: Record<string, string> }): Promise<PageUnderTest> {
  const config = loadConfig({ OPERATOR_TOKENS: `ada:${o.token}`, PROVIDER_ENV: 'sandbox', ...o.settings });
  const log = silentLogger();
  const server = await startHttpServer({ host: '127.0.0.1', port: 0, log, name: 'operator', routes: [...operatorRoutes({ config, database: db, log }), ...pageRoutes()] });
  const profile = await mkdtemp(path.join(tmpdir(), 'chromium-page-'));
  const context = await chromium.launchPersistentContext(profile, { executablePath: CHROMIUM, args: ARGS, headless: true });
  const page = context.pages()[0] ?? (await context.newPage());
  return {
    server, context, page,
    async signIn() {
      await page.fill('#token', o.token);
      await page.keyboard.press('Enter');
      await page.waitForSelector('#who');
    },
    async close() {
      await context.close();
      await rm(profile, { recursive: true, force: true });
      await server.close();
    },
  };
}
