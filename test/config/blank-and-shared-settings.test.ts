import { afterEach, describe, expect, it, vi } from 'vitest';
import { loadConfig } from '../../src/config/load.js';
import { createLogger } from '../../src/log/logger.js';

const SHARED = 'shared-46d6e615fcadf914a87ed188962cf565';
const ALICE = 'alice-2e9a6b8f9ae100b959a57a8973c90c31';

const outcome = (env: Record<string, string>): string => {
  try {
    loadConfig(env);
    return 'accepted';
  } catch (error) {
    return String(error);
  }
};

describe('settings.md OPERATOR_TOKENS: "tokens all different"; the history records operator:<name>', () => {
  it('refuses an OPERATOR_TOKEN equal to a named token (else that person is identified as the shared "api" and may self-assert any name)', () => {
    expect(outcome({ OPERATOR_TOKEN: ALICE, OPERATOR_TOKENS: `alice:${ALICE}` })).toMatch(/OPERATOR_TOKEN/);
  });
});

describe('CONTRACT.md: bad configuration exits 2 naming the setting', () => {
  it('refuses PORT=" " instead of reading it as 0 (a random port)', () => {
    expect(outcome({ PORT: ' ' })).toMatch(/invalid setting PORT/);
  });
  it('refuses HTTP_MAX_RETRIES=" " instead of reading it as 0 retries', () => {
    expect(outcome({ HTTP_MAX_RETRIES: ' ' })).toMatch(/invalid setting HTTP_MAX_RETRIES/);
  });
});

describe('settings.md: secrets never logged; logger.ts: "a careless log.info({ config }) stays safe"', () => {
  afterEach(() => vi.restoreAllMocks());
  it('redacts the named operator tokens of OPERATOR_TOKENS as it redacts OPERATOR_TOKEN', async () => {
    const written: string[] = [];
    vi.spyOn(process.stdout, 'write').mockImplementation(((chunk: string) => { written.push(String(chunk)); return true; }) as never);
    const log = createLogger('info', 'stdout', { readable: true });
    log.info({ config: loadConfig({ OPERATOR_TOKEN: SHARED, OPERATOR_TOKENS: `alice:${ALICE}` }) }, 'settings');
    await new Promise((r) => setTimeout(r, 50));
    vi.restoreAllMocks();
    const text = written.join('');
    expect(text).toContain('settings');
    expect(text).not.toContain(SHARED);
    expect(text, 'named operator token written to the log').not.toContain(ALICE);
  });
});
