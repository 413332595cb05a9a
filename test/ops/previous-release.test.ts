import { execFileSync, spawn } from 'node:child_process';
import { mkdtemp, rm, symlink } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { request } from 'undici';
import { afterAll, describe, expect, it } from 'vitest';
import { createTestDatabase, type TestDatabase } from '../helpers/database.js';
import { postDelivery, TEST_SECRET } from '../helpers/receiver.js';
import { samplePayload } from '../fixtures/spec-payloads.js';
import { cleanEnv, REPO_ROOT } from '../e2e/cli.js';
import { waitFor } from '../helpers/wait.js';
import { applyMigrations } from '../../src/ledger/migrate.js';
import { silentLogger } from '../../src/log/logger.js';

/**
 * A rolling update runs the release before beside the schema the new one migrated to. The release
 * before is the parent of the newest commit that changed migrations/: built here from git, started
 * on a ledger migrated by this checkout, it must either work (ready, and a delivery it answers 2xx
 * is stored) or not be ready and say why in /readyz.
 */
const git = (...args: string[]) => execFileSync('git', args, { cwd: REPO_ROOT, encoding: 'utf8' }).trim();

describe('the previous release on this release\'s schema', () => {
  const cleanups: (() => Promise<void>)[] = [];
  afterAll(async () => {
    for (const cleanup of cleanups.reverse()) await cleanup();
  });

  it('works, or is not ready and says why', async () => {
    const schemaChange = git('log', '-1', '--format=%H', 'HEAD', '--', 'migrations');
    const previous = git('rev-parse', `${schemaChange}^`);
    const dir = await mkdtemp(path.join(tmpdir(), 'bnpl-previous-'));
    cleanups.push(() => rm(dir, { recursive: true, force: true }));
    execFileSync('sh', ['-c', `git archive ${previous} | tar -x -C "${dir}"`], { cwd: REPO_ROOT });
    // The release's own build step, with this checkout's installed packages.
    await symlink(path.join(REPO_ROOT, 'node_modules'), path.join(dir, 'node_modules'), 'dir');
    execFileSync(process.execPath, [path.join(REPO_ROOT, 'node_modules/typescript/bin/tsc'), '-p', 'tsconfig.build.json'], { cwd: dir, stdio: 'pipe' });

    const db: TestDatabase = await createTestDatabase('previous_release', { poolMax: 2 });
    // Migrated by this checkout's migrate (the template may predate the schema_releases record).
    await applyMigrations(db, silentLogger());
    const [schema] = await db.sql<{ tag: string }[]>`select migration_tag as tag from schema_releases order by migration_when desc limit 1`;
    expect(schema?.tag).toMatch(/^\d{4}_/);

    const child = spawn(process.execPath, [path.join(dir, 'bin/bnpl-recon.js'), 'start'], {
      cwd: dir,
      stdio: ['ignore', 'pipe', 'pipe'],
      env: cleanEnv({
        DATABASE_URL: db.url, PORT: '0', METRICS_PORT: '0', HOST: '127.0.0.1', LOG_LEVEL: 'info', PROVIDER_ENV: 'sandbox',
        PROVIDER_BASE_URL: 'http://127.0.0.1:9', PROVIDER_API_KEY: 'unused', WEBHOOK_SECRET: TEST_SECRET,
        POLL_SCHEDULE: '0 0 1 1 *', RECONCILE_SCHEDULE: '0 0 1 1 *', RECON_DATA_DIR: path.join(dir, 'data'),
      }),
    });
    let out = '';
    child.stdout.on('data', (d: Buffer) => (out += d.toString()));
    child.stderr.on('data', (d: Buffer) => (out += d.toString()));
    const exited = new Promise<void>((resolve) => child.on('exit', () => resolve()));
    cleanups.push(async () => {
      child.kill('SIGTERM');
      await Promise.race([exited, new Promise((r) => setTimeout(r, 20_000))]);
      child.kill('SIGKILL');
      await exited;
    });
    const running = await waitFor(`the previous release ${previous.slice(0, 8)} running (output: ${out.slice(-1500)})`, () => {
      for (const line of out.split('\n')) {
        if (!line.startsWith('{')) continue;
        const entry = JSON.parse(line) as { msg?: string; url?: string };
        if (entry.msg === 'bnpl-recon running' && entry.url) return entry.url;
      }
      return undefined;
    }, 90_000);

    const readyz = await request(`${running}/readyz`);
    const body = (await readyz.body.json()) as { status: string; schema?: string };
    if (readyz.statusCode === 200) {
      // It says it is ready: then it must store what it acknowledges.
      const payload = samplePayload('order/confirmed', 7);
      const answer = await postDelivery(`${running}/webhooks`, JSON.stringify(payload));
      expect(answer.status, `a ready previous release answered ${answer.status} ${JSON.stringify(answer.body)}`).toBeLessThan(300);
      const stored = await db.sql<{ n: number }[]>`select count(*)::int as n from order_events where order_uuid = ${payload.order_uuid as string}`;
      expect(stored[0]?.n).toBe(1);
    } else {
      expect(readyz.statusCode).toBe(503);
      expect(body.schema ?? '').toMatch(/migration/);
    }
  }, 300_000);
});
