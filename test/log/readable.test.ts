import { spawnSync } from 'node:child_process';
import { describe, expect, it } from 'vitest';
import { readableLine, wantsReadableLogs } from '../../src/log/logger.js';

const CLI = 'src/cli.ts';
// A database that does not exist: `migrate` logs its shutdown line and exits without touching anything.
const env = { ...process.env, DATABASE_URL: 'postgres://postgres@127.0.0.1:5432/bnpl_recon_no_such_database', LOG_LEVEL: 'info' };

describe('log lines for people', () => {
  it('are readable only for a one-off command whose stderr is a terminal', () => {
    expect(wantsReadableLogs('stderr', false, true)).toBe(true);
    expect(wantsReadableLogs('stderr', false, false)).toBe(false);
    expect(wantsReadableLogs('stderr', false, undefined)).toBe(false);
    expect(wantsReadableLogs('stderr', true, true)).toBe(false);
    expect(wantsReadableLogs('stdout', false, true)).toBe(false);
  });

  it('shows time, level (unless info), message and fields', () => {
    const json = JSON.stringify({ level: 40, level_name: 'warn', time: '2026-11-25T14:16:18.958Z', service: 'bnpl-recon', file: 'a b.xml', lines: 3, msg: 'statement refused' });
    expect(readableLine(json)).toBe('14:16:18 WARN statement refused file="a b.xml" lines=3\n');
    expect(readableLine('not json')).toBe('not json\n');
  });

  it('a command at a pseudo-terminal writes readable lines; through a pipe JSON', { timeout: 60_000 }, () => {
    const command = `${process.execPath} --import tsx ${CLI} migrate`;
    const tty = spawnSync('script', ['-qec', command, '/dev/null'], { env, encoding: 'utf8' });
    const ttyLines = tty.stdout.split(/\r?\n/).filter((l) => l.includes('shutting down'));
    expect(ttyLines.length, tty.stdout + tty.stderr).toBe(1);
    expect(ttyLines[0]).toMatch(/^\d\d:\d\d:\d\d shutting down reason="database unreachable"$/);

    const piped = spawnSync(process.execPath, ['--import', 'tsx', CLI, 'migrate'], { env, encoding: 'utf8' });
    const line = piped.stderr.split('\n').find((l) => l.includes('shutting down'))!;
    expect(JSON.parse(line)).toMatchObject({ msg: 'shutting down', level_name: 'info', reason: 'database unreachable' });
  });
});
