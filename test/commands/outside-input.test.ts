import { spawn, spawnSync } from 'node:child_process';
import { closeSync, openSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadConfig } from '../../src/config/load.js';
import { readableLine, silentLogger } from '../../src/log/logger.js';
import { fetchedSecrets } from '../../src/webhooks/secrets.js';
import { cleanEnv, REPO_ROOT } from '../e2e/cli.js';
import { createTestDatabase, type TestDatabase } from '../helpers/database.js';

const ESC = '\u001b';

/** The CLI as a person runs it: exit status, stdout, stderr. */
function cli(args: string[], env: Record<string, string>, stdout: 'pipe' | number = 'pipe') {
  return spawnSync(process.execPath, ['--import', 'tsx', 'src/cli.ts', ...args], {
    cwd: REPO_ROOT,
    env: cleanEnv(env),
    encoding: 'utf8',
    stdio: ['ignore', stdout, 'pipe'],
    timeout: 60_000,
  });
}

/** Same, without blocking the event loop (a fake provider in this process must answer). */
function cliAsync(args: string[], env: Record<string, string>): Promise<{ status: number | null; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    const child = spawn(process.execPath, ['--import', 'tsx', 'src/cli.ts', ...args], { cwd: REPO_ROOT, env: cleanEnv(env), stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d: Buffer) => (stdout += d.toString()));
    child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
    child.on('close', (status) => resolve({ status, stdout, stderr }));
  });
}

let db: TestDatabase;
beforeAll(async () => {
  db = await createTestDatabase('cmd_outside_input');
});

describe('settings.md: DATABASE_URL "never its password" in messages', () => {
  it('an unreachable database whose password holds a raw @ does not print any of the password', () => {
    // postgres.js accepts this URL (the same shape against a reachable server works), so it is a
    // configuration a user can have; the message names the host, and only the host.
    const result = cli(['migrate'], { DATABASE_URL: 'postgres://bnpl:first@SecretTail9x@127.0.0.1:1/ledger', LOG_LEVEL: 'silent' });
    expect(result.status).toBe(1);
    expect(result.stderr).toContain('DATABASE_URL');
    expect(result.stderr, result.stderr).not.toContain('SecretTail9x');
  });
});

describe('CONTRACT.md: exit 0 on success, 2 on bad configuration, 1 on any other failure', () => {
  it('SHUTDOWN_TIMEOUT_MS above 2^31-1 ms is not silently read as "1 ms" (a successful report then exits 1)', () => {
    const result = cli(['report', 'discrepancies'], { DATABASE_URL: db.url, SHUTDOWN_TIMEOUT_MS: '3000000000', LOG_LEVEL: 'error' });
    // Either refused as bad configuration (2, naming it) or honoured (0); never a failed success.
    expect([0, 2], result.stderr).toContain(result.status);
    if (result.status === 2) expect(result.stderr).toContain('SHUTDOWN_TIMEOUT_MS');
  });

  it('a PAYOUT_SETTLEMENT_DAYS the database cannot hold is bad configuration (exit 2 naming it), not a SQL error on every pass', () => {
    const result = cli(['reconcile'], { DATABASE_URL: db.url, PAYOUT_SETTLEMENT_DAYS: '1000000000000', LOG_LEVEL: 'silent' });
    expect(result.status, result.stderr).toBe(2);
    expect(result.stderr).toContain('PAYOUT_SETTLEMENT_DAYS');
  });

  it('a report that could not be written (stdout on a full disk) does not exit 0', () => {
    const full = openSync('/dev/full', 'w');
    try {
      const result = cli(['report', 'discrepancies', '--status', 'all'], { DATABASE_URL: db.url, LOG_LEVEL: 'silent' }, full);
      expect(result.status, `stderr: ${result.stderr}`).not.toBe(0);
    } finally {
      closeSync(full);
    }
  });
});

describe('settings a timer cannot hold', () => {
  it('refuses WEBHOOK_KEYS_REFRESH_SECONDS of 30 days (2592000 s) naming it: a timer that long fires after 1 ms, every ms', () => {
    expect(() => loadConfig({ WEBHOOK_KEYS_REFRESH_SECONDS: '2592000' })).toThrow(/WEBHOOK_KEYS_REFRESH_SECONDS: 2592000 s is longer than a timer holds/);
    // A week is taken, and the source fetches once at start, then waits for it.
    const config = loadConfig({ WEBHOOK_KEYS_REFRESH_SECONDS: '604800' });
    expect(config.WEBHOOK_KEYS_REFRESH_SECONDS).toBe(604800);
  });

  it('refreshes once at start and waits the interval when it is a week', async () => {
    const config = loadConfig({ WEBHOOK_KEYS_REFRESH_SECONDS: '604800' });
    let fetches = 0;
    const source = fetchedSecrets({
      fetch: async () => {
        fetches += 1;
        return ['a3f9c1e07b2d4e6f8a1b3c5d7e9f0a2b'];
      },
      refreshIntervalMs: config.WEBHOOK_KEYS_REFRESH_SECONDS * 1000,
      minRefetchIntervalMs: config.WEBHOOK_KEYS_MIN_REFETCH_SECONDS * 1000,
      fetchTimeoutMs: 2000,
      retiredOverlapMs: config.WEBHOOK_KEYS_OVERLAP_SECONDS * 1000,
      log: silentLogger(),
    });
    await source.start();
    await new Promise((r) => setTimeout(r, 300));
    source.stop();
    expect(fetches).toBe(1);
  });
});

describe('terminal escape sequences from outside data do not reach a person\'s terminal', () => {
  it('readableLine neutralises control characters in the message and in fields without whitespace', () => {
    const json = JSON.stringify({
      level: 40,
      level_name: 'warn',
      time: '2026-11-25T14:16:18.958Z',
      msg: `upload refused: ${ESC}]0;owned\u0007`,
      file: `${ESC}[2J${ESC}[31mstatement.xml`,
    });
    const line = readableLine(json);
    expect(line.slice(0, -1), JSON.stringify(line)).not.toMatch(/[\u0000-\u0008\u000b-\u001f\u007f-\u009f]/);
  });

  describe('a provider error shown by a command', () => {
    let server: Server;
    let base: string;
    beforeAll(async () => {
      server = createServer((_req, res) => {
        res.writeHead(400, { 'content-type': 'application/json' });
        res.end(JSON.stringify({ status: 400, errors: [{ name: 'bad', details: `${ESC}]0;owned\u0007${ESC}[2J${ESC}[31mred` }] }));
      });
      await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
      base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
    });
    afterAll(async () => {
      await new Promise((r) => server.close(r));
    });

    it('webhooks keys prints the provider\'s error details without raw ESC / BEL', async () => {
      const result = await cliAsync(['webhooks', 'keys'], { PROVIDER_BASE_URL: base, PROVIDER_API_KEY: 'k-2e9a6b8f9ae100b9', LOG_LEVEL: 'silent' });
      expect(result.status).toBe(1);
      expect(result.stderr).toContain('provider answered 400');
      // Shown as \u001b and \u0007 escapes: the raw characters would retitle and clear the terminal.
      expect(result.stderr).not.toMatch(/[\u001b\u0007]/);
      expect(result.stderr).toContain('\\u001b]0;owned\\u0007');
    });
  });
});
