import { Writable } from 'node:stream';
import { pino, type Logger } from 'pino';
import { configSchema, type Config } from '../../src/config/schema.js';

export const TEST_API_KEY = 'sk_test_SECRET_4f9c1d2e7a';

/** A config as loadConfig would build it from these settings. */
export function testConfig(settings: Record<string, string | number>): Config {
  const input: Record<string, string> = { PROVIDER_API_KEY: TEST_API_KEY, LOG_LEVEL: 'silent' };
  for (const [key, value] of Object.entries(settings)) input[key] = String(value);
  return configSchema.parse(input);
}

/** A real pino logger whose every line is kept, so tests can assert what was (not) logged. */
export function capturingLogger(level = 'debug'): { log: Logger; lines: string[] } {
  const lines: string[] = [];
  const sink = new Writable({
    write(chunk: Buffer, _enc, done) {
      lines.push(chunk.toString('utf8'));
      done();
    },
  });
  return { log: pino({ level }, sink), lines };
}
