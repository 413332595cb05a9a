import { describe, expect, it } from 'vitest';
import { cleanEnv, runCli } from '../e2e/cli.js';

/**
 * CONTRACT.md, Commands: exit 2 on bad usage. `sim` passed --port, --time-scale and --start-time
 * straight to the simulator, whose refusal was a plain Error (exit 1) naming no flag (RangeError from
 * listen(), "timeScale must be positive"); --log-level bogus was reported as LOG_LEVEL.
 */
describe('sim with a bad option value', () => {
  const cases: [string, string[], string][] = [
    ['a port out of range', ['--port', '99999'], '--port'],
    ['a fractional port', ['--port', '1.5'], '--port'],
    ['a zero time scale', ['--port', '0', '--time-scale', '0'], '--time-scale'],
    ['a start time that is no time', ['--port', '0', '--start-time', 'garbage'], '--start-time'],
    ['an unknown log level', ['--port', '0', '--log-level', 'bogus'], '--log-level'],
  ];
  for (const [what, args, flag] of cases) {
    it(`exits 2 naming ${flag} for ${what}`, { timeout: 60_000 }, async () => {
      const result = await runCli(['sim', ...args, '--no-wait', '--out', '/tmp/sim-usage-test-out'], cleanEnv({ LOG_LEVEL: 'silent' }), 30_000);
      expect({ code: result.code, stdout: result.stdout, stderr: result.stderr.trim() }).toEqual({ code: 2, stdout: '', stderr: expect.stringMatching(new RegExp(`^bnpl-recon sim: ${flag} expects`)) });
    });
  }
});
