import { execFileSync, spawnSync } from 'node:child_process';
import { chmodSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { REPO_ROOT, cleanEnv } from '../e2e/cli.js';
import { isRoot, nobodyCanRun } from '../helpers/as-nobody.js';

/**
 * With DATABASE_URL unset the ledger is an embedded Postgres under RECON_DATA_DIR. A directory this
 * user cannot create was a run-time failure (exit 1, "could not start the embedded Postgres ...
 * EACCES"); it is the setting to change: exit 2 naming RECON_DATA_DIR. Root may write anywhere, so as
 * root the command runs as nobody.
 */
// As root the command runs as nobody (see test/helpers/as-nobody.ts for where that cannot be).
const runnable = isRoot ? nobodyCanRun([path.join(REPO_ROOT, 'node_modules/tsx/dist/loader.mjs'), path.join(REPO_ROOT, 'src/cli.ts')]) : true;

describe('RECON_DATA_DIR this user cannot create', () => {
  it.skipIf(!runnable)('migrate exits 2 naming RECON_DATA_DIR', { timeout: 60_000 }, () => {
    const parent = mkdtempSync(path.join(tmpdir(), 'data-dir-not-writable-'));
    chmodSync(parent, 0o555);
    const dataDir = path.join(parent, 'data');
    const node = [process.execPath, '--import', path.join(REPO_ROOT, 'node_modules/tsx/dist/loader.mjs'), path.join(REPO_ROOT, 'src/cli.ts'), 'migrate'];
    const env = cleanEnv({ RECON_DATA_DIR: dataDir, LOG_LEVEL: 'silent' });
    const script = `cd / && RECON_DATA_DIR=${JSON.stringify(dataDir)} LOG_LEVEL=silent exec ${node.map((a) => JSON.stringify(a)).join(' ')}`;
    const [file, args] = isRoot ? ['su', ['nobody', '-s', '/bin/sh', '-c', script]] : [node[0]!, node.slice(1)];
    try {
      execFileSync(file, args, { cwd: '/', env: isRoot ? { PATH: env.PATH } : env, encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] });
      expect.unreachable('migrate succeeded');
    } catch (error) {
      const { status, stderr } = error as { status: number; stderr: string };
      expect({ status, stderr: stderr.trim() }).toEqual({ status: 2, stderr: expect.stringContaining(`invalid setting RECON_DATA_DIR: this user`) });
    } finally {
      chmodSync(parent, 0o755);
      rmSync(parent, { recursive: true, force: true });
    }
  });
});

describe('RECON_DATA_DIR where a file is', () => {
  it.each([['the path itself', ''], ['a parent', 'below']])('migrate exits 2 naming RECON_DATA_DIR when a file is %s', { timeout: 60_000 }, (_what, below) => {
    const parent = mkdtempSync(path.join(tmpdir(), 'data-dir-file-'));
    const file = path.join(parent, 'data');
    writeFileSync(file, 'not a directory');
    const dataDir = below ? path.join(file, below) : file;
    try {
      const result = spawnSync(process.execPath, ['--import', path.join(REPO_ROOT, 'node_modules/tsx/dist/loader.mjs'), path.join(REPO_ROOT, 'src/cli.ts'), 'migrate'], {
        cwd: '/', env: cleanEnv({ RECON_DATA_DIR: dataDir, LOG_LEVEL: 'silent' }), encoding: 'utf8',
      });
      expect({ status: result.status, stderr: result.stderr.trim() }).toEqual({ status: 2, stderr: expect.stringContaining('invalid setting RECON_DATA_DIR:') });
    } finally {
      rmSync(parent, { recursive: true, force: true });
    }
  });
});
