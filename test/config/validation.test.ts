import { spawnSync } from 'node:child_process';
import { afterAll, describe, expect, it } from 'vitest';
import { addressMatcher, parseAddressEntry, splitList } from '../../src/config/addresses.js';
import { ConfigError, loadConfig } from '../../src/config/load.js';
import { clientAddress } from '../../src/webhooks/source-address.js';
import { samplePayload } from '../fixtures/spec-payloads.js';
import { createTestDatabase, type TestDatabase } from '../helpers/database.js';
import { postDelivery, startTestReceiver } from '../helpers/receiver.js';
import { cleanEnv, REPO_ROOT } from '../e2e/cli.js';

function refusal(env: Record<string, string>): ConfigError {
  try {
    loadConfig(env);
  } catch (error) {
    if (error instanceof ConfigError) return error;
    throw error;
  }
  throw new Error(`accepted ${JSON.stringify(env)}`);
}

/** The CLI, as an operator runs it: exit status and stderr. */
function cli(args: string[], env: Record<string, string>) {
  return spawnSync(process.execPath, ['--import', 'tsx', 'src/cli.ts', ...args], { cwd: REPO_ROOT, env: cleanEnv(env), encoding: 'utf8' });
}

describe('address settings', () => {
  it('accept addresses and CIDR ranges, IPv4 and IPv6', () => {
    const config = loadConfig({ TRUSTED_PROXIES: '10.244.0.0/16, 192.168.1.10, fd00::/8, ::1', WEBHOOK_ALLOWED_IPS: '3.68.36.0/24,3.127.195.5' });
    expect(config.TRUSTED_PROXIES).toEqual(['10.244.0.0/16', '192.168.1.10', 'fd00::/8', '::1']);
    expect(loadConfig({ WEBHOOK_ALLOWED_IPS: 'spec' }).WEBHOOK_ALLOWED_IPS).toBe('spec');
  });

  it.each([
    ['WEBHOOK_ALLOWED_IPS', 'notanip'],
    ['WEBHOOK_ALLOWED_IPS', '3.68.36.187,spec'],
    ['WEBHOOK_ALLOWED_IPS', '10.0.0.0/33'],
    ['WEBHOOK_ALLOWED_IPS', ','],
    ['TRUSTED_PROXIES', 'notanip'],
    ['TRUSTED_PROXIES', '10.0.0.1/8/1'],
    ['TRUSTED_PROXIES', 'fd00::/129'],
    ['TRUSTED_PROXIES', '10.0.0.1, ingress.local'],
  ])('refuse %s=%s, naming the setting', (setting, value) => {
    const error = refusal({ [setting]: value });
    expect(error.setting).toBe(setting);
    expect(error.message).toMatch(/not an IP address or CIDR range|prefix length|empty list/);
  });

  it('match CIDR ranges when resolving the source through trusted proxies', () => {
    const proxies = addressMatcher(['10.244.0.0/16', 'fd00::/8']);
    expect(clientAddress('10.244.7.3', '3.68.36.187', proxies)).toBe('3.68.36.187');
    expect(clientAddress('::ffff:10.244.7.3', '3.68.36.187', proxies)).toBe('3.68.36.187');
    expect(clientAddress('fd00::12', '3.68.36.187', proxies)).toBe('3.68.36.187');
    // Two proxy hops inside the range are skipped; the left-most entry is the client's own claim.
    expect(clientAddress('10.244.7.3', '9.9.9.9, 3.68.36.187, 10.244.1.1', proxies)).toBe('3.68.36.187');
    // A peer outside the range is not a proxy: its header is ignored.
    expect(clientAddress('10.245.0.1', '3.68.36.187', proxies)).toBe('10.245.0.1');
  });

  it('take an IPv4-mapped range as the IPv4 range under its last 32 bits', () => {
    expect(parseAddressEntry('::ffff:10.244.0.0/112')).toEqual({ address: '10.244.0.0', family: 4, prefix: 16 });
    expect(parseAddressEntry('0:0:0:0:0:FFFF:a00:0/104')).toEqual({ address: '10.0.0.0', family: 4, prefix: 8 });
    const proxies = addressMatcher(loadConfig({ TRUSTED_PROXIES: '::ffff:10.244.0.0/112' }).TRUSTED_PROXIES);
    expect(clientAddress('10.244.7.3', '3.68.36.187', proxies)).toBe('3.68.36.187');
    expect(clientAddress('::ffff:10.244.7.3', '3.68.36.187', proxies)).toBe('3.68.36.187');
    expect(clientAddress('10.245.0.1', '3.68.36.187', proxies)).toBe('10.245.0.1');
  });

  // Under /96 the mask reaches into the ::ffff group, so the range holds every IPv4 address: the
  // matcher built from '::ffff:10.0.0.0/8' (10.0.0.0/8 meant) would trust 203.0.113.9 as a proxy.
  it.each([
    ['TRUSTED_PROXIES', '::ffff:10.0.0.0/8'],
    ['TRUSTED_PROXIES', '10.0.0.1, ::ffff:10.244.0.0/95'],
    ['WEBHOOK_ALLOWED_IPS', '::ffff:3.68.36.0/24'],
  ])('refuse %s=%s, an IPv4-mapped range under /96 that holds every IPv4 address', (setting, value) => {
    const error = refusal({ [setting]: value });
    expect(error.setting).toBe(setting);
    expect(error.message).toMatch(/IPv4-mapped address with a prefix length under 96/);
    expect(() => addressMatcher(splitList(value))).toThrow(/prefix length under 96/);
  });
});

describe('other settings refused with exit status 2 by the CLI', () => {
  it.each([
    [{ TRUSTED_PROXIES: 'notanip' }, 'TRUSTED_PROXIES'],
    [{ TRUSTED_PROXIES: '::ffff:10.0.0.0/8' }, 'TRUSTED_PROXIES'],
    [{ WEBHOOK_ALLOWED_IPS: 'notanip' }, 'WEBHOOK_ALLOWED_IPS'],
    [{ PORT: '9464' }, 'METRICS_PORT'],
    [{ PORT: '8000', METRICS_PORT: '8000' }, 'METRICS_PORT'],
    [{ DATABASE_URL: 'mysql://user:pw@db.example/ledger' }, 'DATABASE_URL'],
    [{ DATABASE_URL: 'db.example:5432' }, 'DATABASE_URL'],
  ])('%o names %s', (env, setting) => {
    const result = cli(['migrate'], env);
    expect(result.status, result.stderr).toBe(2);
    expect(result.stderr).toContain(`invalid setting ${setting}`);
    expect(result.stderr).not.toContain('pw@');
  });

  it('two ephemeral ports (0) are not the same port', () => {
    expect(() => loadConfig({ PORT: '0', METRICS_PORT: '0' })).not.toThrow();
  });

  it('an unreachable database names DATABASE_URL and where it points, not its password', () => {
    const result = cli(['migrate'], { DATABASE_URL: 'postgres://bnpl:s3cretpw@127.0.0.1:1/ledger', LOG_LEVEL: 'silent' });
    expect(result.status).toBe(1);
    expect(result.stderr).toContain('DATABASE_URL (127.0.0.1:1/ledger)');
    expect(result.stderr).toContain('ECONNREFUSED');
    expect(result.stderr).not.toContain('s3cretpw');
  });

  it('--version prints the package version and the commit', () => {
    const result = cli(['--version'], {});
    expect(result.status).toBe(0);
    expect(result.stdout.trim()).toMatch(/^bnpl-recon \d+\.\d+\.\d+ \(commit \S+\)$/);
    expect(cli(['--version'], { BNPL_RECON_REVISION: 'abc1234' }).stdout.trim()).toMatch(/\(commit abc1234\)$/);
  });
});

describe('a receiver behind an ingress whose pods are a CIDR range', () => {
  let database: TestDatabase | undefined;
  afterAll(async () => {
  });

  it('stores a delivery forwarded from an allowed address and refuses others with 403', async () => {
    database = await createTestDatabase('config_cidr');
    // The test client connects from 127.0.0.1, inside the trusted range like an ingress pod.
    const receiver = await startTestReceiver(database, { PROVIDER_ENV: 'production', WEBHOOK_ALLOWED_IPS: 'spec', TRUSTED_PROXIES: '127.0.0.0/8' });
    const ranged = await startTestReceiver(database, { WEBHOOK_ALLOWED_IPS: '3.68.36.0/24', TRUSTED_PROXIES: '127.0.0.0/8' });
    try {
      const raw = JSON.stringify(samplePayload('order/confirmed', 700));
      expect((await postDelivery(receiver.url, raw, { headers: { 'x-forwarded-for': '3.68.36.187' } })).status).toBe(200);
      expect((await postDelivery(receiver.url, raw, { headers: { 'x-forwarded-for': '9.9.9.9' } })).status).toBe(403);
      expect((await postDelivery(receiver.url, raw)).status).toBe(403);
      const other = JSON.stringify(samplePayload('order/declined', 701));
      expect((await postDelivery(ranged.url, other, { headers: { 'x-forwarded-for': '3.68.36.9' } })).status).toBe(200);
      expect((await postDelivery(ranged.url, other, { headers: { 'x-forwarded-for': '3.68.37.9' } })).status).toBe(403);
      const rows = await database.sql<{ source_ip: string }[]>`select source_ip from webhook_deliveries order by id`;
      expect(rows.map((r) => r.source_ip)).toEqual(['3.68.36.187', '3.68.36.9']);
    } finally {
      await receiver.close();
      await ranged.close();
    }
  });
});

describe('schedules (POLL_SCHEDULE, RECONCILE_SCHEDULE: cron in UTC, docs/settings.md)', () => {
  it('accept five fields, six with seconds first, and a nickname', () => {
    expect(loadConfig({ POLL_SCHEDULE: '*/5 * * * *', RECONCILE_SCHEDULE: '30 */10 * * * *' })).toMatchObject({ POLL_SCHEDULE: '*/5 * * * *', RECONCILE_SCHEDULE: '30 */10 * * * *' });
    expect(loadConfig({ POLL_SCHEDULE: '@hourly' }).POLL_SCHEDULE).toBe('@hourly');
    // Rare but real: the 29th of February on a Monday (2044), the first Monday of a month.
    expect(loadConfig({ RECONCILE_SCHEDULE: '0 0 29 2 1' }).RECONCILE_SCHEDULE).toBe('0 0 29 2 1');
    expect(loadConfig({ RECONCILE_SCHEDULE: '0 6 1-7 * MON' }).RECONCILE_SCHEDULE).toBe('0 6 1-7 * MON');
  });

  it.each([
    ['*/5 * * *', /4 fields/],
    ['0 0 * * * * 2027', /7 fields/],
    ['61 * * * *', /minute/],
    ['every five minutes', /not a valid cron expression/],
    // Days that do not exist: the job would never run, silently.
    ['0 0 30 2 *', /never fires/],
    ['0 6 31 4,6,9,11 *', /never fires/],
  ])('refuse %j naming the problem', (value, message) => {
    const error = refusal({ POLL_SCHEDULE: value });
    expect(error.message).toContain('POLL_SCHEDULE');
    expect(error.message).toMatch(message);
  });
});

describe('TRUSTED_PROXIES entries (docs/settings.md: "an address or range without a port")', () => {
  it.each(['203.0.113.7:51234', '[2001:db8::7]:443'])('refuses %j naming the setting', (entry) => {
    expect(refusal({ TRUSTED_PROXIES: entry }).message).toMatch(/TRUSTED_PROXIES: .* is not an IP address or CIDR range/);
  });
});
