import { ALL_TOPICS } from '../../src/provider/vocabulary.js';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { main } from '../../src/cli.js';
import { fingerprint } from '../../src/commands/webhooks.js';
import { createTestDatabase, type TestDatabase } from '../helpers/database.js';
import { FakeProvider } from './fake-provider.js';
import { TEST_API_KEY } from './helpers.js';

let provider: FakeProvider;
let providerUrl: string;
let database: TestDatabase;
const saved = { ...process.env };

beforeAll(async () => {
  provider = new FakeProvider({ apiKey: TEST_API_KEY, orders: 120, webhookSecrets: ['whsec_one', 'whsec_two'], keysShape: 'list', webhookPrefix: '/api/v1' });
  const url = await provider.listen();
  providerUrl = url;
  database = await createTestDatabase('provider_commands');
  Object.assign(process.env, {
    PROVIDER_BASE_URL: url,
    PROVIDER_API_KEY: TEST_API_KEY,
    PROVIDER_WEBHOOK_PATH_PREFIX: '/api/v1',
    DATABASE_URL: database.url,
    LOG_LEVEL: 'silent',
  });
});
afterAll(async () => {
  process.env = saved;
  await provider.close();
});

async function run(...argv: string[]): Promise<{ code: number; out: string; err: string }> {
  let out = '';
  let err = '';
  const stdout = vi.spyOn(process.stdout, 'write').mockImplementation((chunk) => ((out += String(chunk)), true));
  const stderr = vi.spyOn(process.stderr, 'write').mockImplementation((chunk) => ((err += String(chunk)), true));
  try {
    const code = await main(argv);
    return { code, out, err };
  } finally {
    stdout.mockRestore();
    stderr.mockRestore();
  }
}

describe('webhooks and poll commands', () => {
  it('webhooks keys prints the count and fingerprints, and the secrets only with --reveal', async () => {
    const plain = await run('webhooks', 'keys');
    expect(plain.code).toBe(0);
    expect(plain.out).toBe(`2 webhook signing secrets\nsha256:${fingerprint('whsec_one')}\nsha256:${fingerprint('whsec_two')}\n`);
    expect(plain.out).not.toContain('whsec_');
    expect(fingerprint('whsec_one')).toMatch(/^[0-9a-f]{12}$/);
    const revealed = await run('webhooks', 'keys', '--reveal');
    expect(revealed.out).toBe('whsec_one\nwhsec_two\n');
  });

  it('webhooks register registers every topic family the daemon reads by default, or the ones given', async () => {
    const all = await run('webhooks', 'register', '--address', 'https://recon.example/webhooks');
    expect(all.code).toBe(0);
    const registered = provider.stats.registrations.map((r) => r.topic);
    expect(registered).toEqual([
      'order', 'invoice', 'payout', 'buyer', 'factoring', 'kyc',
      'kyc/accepted', 'applicant/pending', 'applicant/accepted', 'billing_configuration/created',
    ]);
    // Every topic the classifier parses reaches us: by its listed bare topic, or subscribed by name.
    const listedUnderBare = (topic: string) => !['kyc/accepted'].includes(topic) && registered.includes(topic.split('/')[0]!);
    for (const topic of ALL_TOPICS) expect(listedUnderBare(topic) || registered.includes(topic), topic).toBe(true);
    provider.stats.registrations.length = 0;
    const some = await run('webhooks', 'register', '--address', 'https://recon.example/webhooks', '--topic', 'order/confirmed', '--topic', 'payout');
    expect(some.code).toBe(0);
    expect(provider.stats.registrations).toEqual([
      { topic: 'order/confirmed', address: 'https://recon.example/webhooks' },
      { topic: 'payout', address: 'https://recon.example/webhooks' },
    ]);
  });

  it('webhooks rejects bad usage with exit 2', async () => {
    expect((await run('webhooks', 'register')).code).toBe(2);
    expect((await run('webhooks', 'register', '--address', 'not a url')).code).toBe(2);
    expect((await run('webhooks', 'register', '--address', 'https://x.example', '--topic', 'Order!')).code).toBe(2);
    expect((await run('webhooks', 'frobnicate')).code).toBe(2);
    expect((await run('webhooks', 'keys', '--bogus')).code).toBe(2);
  });

  it('a wrong API key fails with exit 1 and a message naming the setting, not the key', async () => {
    process.env.PROVIDER_API_KEY = 'sk_wrong_key_123456';
    try {
      const result = await run('webhooks', 'keys');
      expect(result.code).toBe(1);
      expect(result.err).toMatch(/401.*PROVIDER_API_KEY/);
      expect(result.err + result.out).not.toContain('sk_wrong_key_123456');
    } finally {
      process.env.PROVIDER_API_KEY = TEST_API_KEY;
    }
  });

  it('poll runs one complete poll, prints its summary and exits 0', async () => {
    const result = await run('poll');
    expect(result.code).toBe(0);
    const summary = JSON.parse(result.out) as { status: string; orders: number };
    expect(summary).toMatchObject({ status: 'complete', orders: 120 });
    const rows = await database.sql<{ n: number }[]>`select count(*)::int as n from order_snapshots`;
    expect(rows[0]!.n).toBe(120);
  });

  it('poll exits 2 naming a missing setting', async () => {
    delete process.env.PROVIDER_BASE_URL;
    try {
      const result = await run('poll');
      expect(result.code).toBe(2);
      expect(result.err).toContain('PROVIDER_BASE_URL');
    } finally {
      process.env.PROVIDER_BASE_URL = providerUrl;
    }
  });
});
