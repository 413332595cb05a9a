import { describe, expect, it } from 'vitest';
import { asksForHelp } from '../src/cli.js';
import { cleanEnv, runCli } from './e2e/cli.js';

/**
 * `-h`/`--help` anywhere in the arguments printed help and exited 0: `discrepancy ack 1 --note -h`
 * acknowledged nothing and said it succeeded. Help only counts in option position, not as an
 * option's value.
 */
describe('help flags in option position only', () => {
  it('counts -h/--help first, after a positional, or after an option with its value inline', () => {
    expect(asksForHelp(['--help'])).toBe(true);
    expect(asksForHelp(['-h'])).toBe(true);
    expect(asksForHelp(['import', '--help'])).toBe(true);
    expect(asksForHelp(['discrepancies', '--format', 'json', '-h'])).toBe(true);
    expect(asksForHelp(['ack', '1', '--note=x', '--help'])).toBe(true);
  });

  it("leaves -h/--help after a bare option (maybe its value) or after `--` to the command's parser", () => {
    expect(asksForHelp(['ack', '1', '--note', '-h'])).toBe(false);
    expect(asksForHelp(['ack', '1', '--note', '--help'])).toBe(false);
    expect(asksForHelp(['--no-wait', '--help'])).toBe(false);
    expect(asksForHelp(['ack', '1', '--', '--help'])).toBe(false);
    expect(asksForHelp([])).toBe(false);
  });

  it('discrepancy ack 1 --note -h is refused (exit 2), not answered with help (exit 0)', { timeout: 60_000 }, async () => {
    const result = await runCli(['discrepancy', 'ack', '1', '--note', '-h'], cleanEnv({ LOG_LEVEL: 'silent' }));
    expect({ code: result.code, stdout: result.stdout, stderr: result.stderr }).toEqual({ code: 2, stdout: '', stderr: expect.stringContaining("'--note=-XYZ'") });
  });

  it('sim --no-wait --help still prints the help (the command knows no --help option)', { timeout: 60_000 }, async () => {
    const result = await runCli(['sim', '--no-wait', '--help'], cleanEnv({ LOG_LEVEL: 'silent' }));
    expect({ code: result.code, stdout: result.stdout, stderr: result.stderr }).toEqual({ code: 0, stdout: expect.stringMatching(/^Usage: bnpl-recon sim/), stderr: '' });
  });
  it('statement import --accept-unbalanced --help prints the help (a hand-parsed command, the flag takes no value)', { timeout: 60_000 }, async () => {
    const result = await runCli(['statement', 'import', '--accept-unbalanced', '--help'], cleanEnv({ LOG_LEVEL: 'silent' }));
    expect({ code: result.code, usage: result.stdout.split('\n')[0]!.slice(0, 40), stderr: result.stderr }).toEqual({ code: 0, usage: 'Usage: bnpl-recon statement import [--pr', stderr: '' });
  });
});
