import { randomBytes } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { parseAllDocuments } from 'yaml';
import { describe, expect, it } from 'vitest';
import { loadConfig } from '../../src/config/load.js';
import { estimatedBits, weakSecretReason } from '../../src/config/secret-strength.js';
import { cleanEnv, spawnCli } from '../e2e/cli.js';

const PLACEHOLDER = 'CHANGE_ME_AT_LEAST_16_CHARS';
const strong = () => randomBytes(24).toString('hex');

describe('secret strength', () => {
  it('refuses placeholders, short values, runs and repeats; accepts random values', () => {
    for (const weak of [PLACEHOLDER, 'change-me-please-0000', 'your-secret-goes-here', 'aaaaaaaaaaaaaaaaaaaa', '0123456789abcdefghij', 'k3Xk3Xk3Xk3Xk3Xk3Xk3X', 'short']) {
      expect(weakSecretReason(weak), weak).toBeDefined();
    }
    expect(weakSecretReason(PLACEHOLDER)).toMatch(/placeholder/);
    expect(weakSecretReason('aaaaaaaaaaaaaaaaaaaa')).toMatch(/too easy to guess/);
    for (let i = 0; i < 200; i++) {
      const value = strong();
      expect(weakSecretReason(value), value).toBeUndefined();
      expect(weakSecretReason(randomBytes(12).toString('base64url'))).toBeUndefined();
    }
    expect(estimatedBits(randomBytes(32).toString('hex'))).toBeGreaterThan(300);
  });

  it('is applied to OPERATOR_TOKEN, each OPERATOR_TOKENS token and each WEBHOOK_SECRET entry, naming the setting and never the value', () => {
    const cases: [Record<string, string>, RegExp][] = [
      [{ OPERATOR_TOKEN: PLACEHOLDER }, /^invalid setting OPERATOR_TOKEN: is a placeholder/],
      [{ OPERATOR_TOKENS: `ada:${PLACEHOLDER}` }, /^invalid setting OPERATOR_TOKENS: the token of 'ada' is a placeholder/],
      [{ OPERATOR_TOKENS: `api:${strong()}` }, /^invalid setting OPERATOR_TOKENS: the name 'api' is the shared OPERATOR_TOKEN's/],
      [{ WEBHOOK_SECRET: 'whsec_1234' }, /^invalid setting WEBHOOK_SECRET: must be at least 16 characters/],
      [{ WEBHOOK_SECRET: `${strong()},${PLACEHOLDER}` }, /^invalid setting WEBHOOK_SECRET: entry 2 is a placeholder/],
      [{ WEBHOOK_SECRET: 'zzzzzzzzzzzzzzzzzzzzzzzz' }, /^invalid setting WEBHOOK_SECRET: is too easy to guess/],
    ];
    for (const [env, message] of cases) {
      expect(() => loadConfig(env)).toThrow(message);
      try {
        loadConfig(env);
      } catch (error) {
        for (const value of Object.values(env)) for (const part of value.split(/[,:]/)) if (part.length >= 16) expect(String(error)).not.toContain(part);
      }
    }
    const good = { OPERATOR_TOKEN: strong(), OPERATOR_TOKENS: `ada:${strong()}`, WEBHOOK_SECRET: `whsec_${strong()},whsec_${strong()}` };
    expect(() => loadConfig(good)).not.toThrow();
  });

  it('start refuses the Kubernetes Secret template\'s placeholder token, and a weak WEBHOOK_SECRET, with exit 2 naming the setting', async () => {
    const template = parseAllDocuments(readFileSync('ops/kubernetes/secret.example.yaml', 'utf8'))[0]!.toJS() as { stringData: Record<string, string> };
    const base = { PROVIDER_BASE_URL: 'http://127.0.0.1:9', PROVIDER_API_KEY: 'sbx_key', PROVIDER_ENV: 'sandbox', LOG_LEVEL: 'silent', PORT: '0', METRICS_PORT: '0' };
    for (const [settings, name] of [
      [{ OPERATOR_TOKEN: template.stringData.OPERATOR_TOKEN! }, 'OPERATOR_TOKEN'],
      [{ WEBHOOK_SECRET: 'secret' }, 'WEBHOOK_SECRET'],
    ] as const) {
      const cli = spawnCli(['start'], cleanEnv({ ...base, ...settings }));
      const { code } = await cli.exited;
      expect(code).toBe(2);
      expect(cli.stderr()).toMatch(new RegExp(`^bnpl-recon start: invalid setting ${name}: `));
      expect(cli.stderr()).not.toContain(Object.values(settings)[0]);
    }
  });
});
