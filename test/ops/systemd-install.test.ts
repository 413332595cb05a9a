import { spawn, spawnSync } from 'node:child_process';
import { chmodSync, existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, statSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { request } from 'undici';
import { afterAll, describe, expect, it } from 'vitest';
import { createTestDatabase, type TestDatabase } from '../helpers/database.js';
import { cleanEnv, REPO_ROOT } from '../e2e/cli.js';
import { TEST_SECRET } from '../helpers/receiver.js';
import { waitFor } from '../helpers/wait.js';

/**
 * The documented systemd install (ops/systemd/install.sh, the list in install-files.txt) run into a
 * temporary root, then the installed tree started the way the unit starts it (WorkingDirectory,
 * ExecStart): it must run, serve the page from its own web/, and carry the unit's Documentation=.
 */
describe('systemd install into a temporary root', () => {
  const cleanups: (() => Promise<void> | void)[] = [];
  afterAll(async () => {
    for (const cleanup of cleanups.reverse()) await cleanup();
  }, 240_000);

  it('installs with one command and the installed daemon starts and serves the page', async () => {
    const root = mkdtempSync(path.join(tmpdir(), 'systemd-root-'));
    cleanups.push(() => rmSync(root, { recursive: true, force: true }));
    const install = spawnSync('sh', ['ops/systemd/install.sh', root], { cwd: REPO_ROOT, encoding: 'utf8' });
    expect(install.status, install.stderr).toBe(0);
    const unit = readFileSync(path.join(root, 'etc/systemd/system/bnpl-recon.service'), 'utf8');
    const docs = /^Documentation=(.*)$/m.exec(unit)![1]!.split(/\s+/).filter((d) => d.startsWith('file://'));
    expect(docs.length).toBeGreaterThan(0);
    for (const doc of docs) expect(existsSync(path.join(root, new URL(doc).pathname)), doc).toBe(true);
    expect(existsSync(path.join(root, 'etc/bnpl-recon/env'))).toBe(true);
    expect(existsSync(path.join(root, 'usr/lib/sysusers.d/bnpl-recon.conf'))).toBe(true);
    const workdir = path.join(root, /^WorkingDirectory=(\S+)$/m.exec(unit)![1]!);
    const execStart = path.join(root, /^ExecStart=(\S+)/m.exec(unit)![1]!);

    const db: TestDatabase = await createTestDatabase('systemd_install', { poolMax: 1 });
    const child = spawn(execStart, ['start'], {
      cwd: workdir,
      stdio: ['ignore', 'pipe', 'pipe'],
      env: cleanEnv({
        DATABASE_URL: db.url, PORT: '0', METRICS_PORT: '0', HOST: '127.0.0.1', LOG_LEVEL: 'info', PROVIDER_ENV: 'sandbox',
        PROVIDER_BASE_URL: 'http://127.0.0.1:9', PROVIDER_API_KEY: 'unused', WEBHOOK_SECRET: TEST_SECRET,
        POLL_SCHEDULE: '0 0 1 1 *', RECONCILE_SCHEDULE: '0 0 1 1 *', RECON_DATA_DIR: path.join(root, 'var/lib/bnpl-recon'),
      }),
    });
    let out = '';
    child.stdout.on('data', (d: Buffer) => (out += d.toString()));
    child.stderr.on('data', (d: Buffer) => (out += d.toString()));
    let code: number | null | undefined;
    const exited = new Promise<void>((resolve) => child.on('exit', (c) => { code = c; resolve(); }));
    cleanups.push(async () => {
      child.kill('SIGTERM');
      await Promise.race([exited, new Promise((r) => setTimeout(r, 20_000))]);
      child.kill('SIGKILL');
      await exited;
    });
    const url = await waitFor(`the installed daemon running (output: ${out.slice(-1500)})`, () => {
      if (code !== undefined) throw new Error(`the installed daemon exited ${code}: ${out.slice(-2000)}`);
      for (const line of out.split('\n')) {
        if (!line.startsWith('{')) continue;
        const entry = JSON.parse(line) as { msg?: string; url?: string };
        if (entry.msg === 'bnpl-recon running' && entry.url) return entry.url;
      }
      return undefined;
    }, 90_000);
    const page = await request(`${url}/`);
    expect(page.statusCode).toBe(200);
    expect(await page.body.text()).toMatch(/<html/i);
    const ready = await request(`${url}/readyz`);
    expect(ready.statusCode).toBe(200);
    await ready.body.dump();
  }, 300_000);

  it('puts a `bnpl-recon` command on PATH that runs the installed launcher with /etc/bnpl-recon/env, as the runbook\'s commands need', async () => {
    // ops/runbook.md tells the SRE to run `bnpl-recon poll`, `bnpl-recon reconcile`, ... On a systemd
    // install the launcher is only at /opt/bnpl-recon/bin, and its `#!/usr/bin/env node` on a login
    // PATH finds Debian 12's node 18.
    const runbook = readFileSync('ops/runbook.md', 'utf8');
    expect(runbook).toMatch(/`bnpl-recon poll`/);
    expect(runbook).toMatch(/sudo -u bnpl-recon bnpl-recon/);
    const root = mkdtempSync(path.join(tmpdir(), 'systemd-cli-root-'));
    cleanups.push(() => rmSync(root, { recursive: true, force: true }));
    const install = spawnSync('sh', ['ops/systemd/install.sh', root], { cwd: REPO_ROOT, encoding: 'utf8' });
    expect(install.status, install.stderr).toBe(0);
    const command = path.join(root, 'usr/local/bin/bnpl-recon');
    expect(existsSync(command), 'ROOT/usr/local/bin/bnpl-recon').toBe(true);
    expect(statSync(command).mode & 0o111).toBe(0o111);

    // The installed command, pointed at this root instead of /, with this test's node as the
    // runtime under /opt/bnpl-recon/node, and the settings file holding a reachable ledger.
    const db: TestDatabase = await createTestDatabase('systemd_cli', { poolMax: 1 });
    mkdirSync(path.join(root, 'opt/bnpl-recon/node/bin'), { recursive: true });
    symlinkSync(process.execPath, path.join(root, 'opt/bnpl-recon/node/bin/node'));
    writeFileSync(path.join(root, 'etc/bnpl-recon/env'), `# settings\nDATABASE_URL=${db.url}\nPROVIDER_ENV=sandbox\nPROVIDER_BASE_URL=http://127.0.0.1:9\nPROVIDER_API_KEY=unused\nRECON_DATA_DIR=${root}/var/lib/bnpl-recon\n`);
    const rooted = path.join(root, 'bnpl-recon-rooted');
    writeFileSync(rooted, readFileSync(command, 'utf8').replaceAll('/opt/bnpl-recon', `${root}/opt/bnpl-recon`).replaceAll('/etc/bnpl-recon', `${root}/etc/bnpl-recon`));
    chmodSync(rooted, 0o755);
    // The caller's environment does not reach the command (the daemon does not see it either):
    // a DATABASE_URL there must not win over the settings file.
    const run = spawnSync(rooted, ['report', 'discrepancies'], {
      cwd: tmpdir(),
      encoding: 'utf8',
      env: { PATH: '/usr/bin:/bin', DATABASE_URL: 'postgres://nobody@127.0.0.1:1/nothing' },
      timeout: 60_000,
    });
    expect(run.status, run.stdout + run.stderr).toBe(0);
  }, 180_000);

  it('reads /etc/bnpl-recon/env as systemd\'s EnvironmentFile= does: a `#` inside a value stays, quotes come off', () => {
    // node --env-file would cut PROVIDER_API_KEY=ab#cd at the `#`, and the CLI would send another
    // key than the service's.
    const root = mkdtempSync(path.join(tmpdir(), 'systemd-cli-env-'));
    cleanups.push(() => rmSync(root, { recursive: true, force: true }));
    const install = spawnSync('sh', ['ops/systemd/install.sh', root], { cwd: REPO_ROOT, encoding: 'utf8' });
    expect(install.status, install.stderr).toBe(0);
    mkdirSync(path.join(root, 'opt/bnpl-recon/node/bin'), { recursive: true });
    symlinkSync(process.execPath, path.join(root, 'opt/bnpl-recon/node/bin/node'));
    // The launcher replaced by one that prints the settings it was given.
    writeFileSync(path.join(root, 'opt/bnpl-recon/bin/bnpl-recon.js'),
      'process.stdout.write(JSON.stringify({ key: process.env.PROVIDER_API_KEY, token: process.env.OPERATOR_TOKEN, quoted: process.env.OPERATOR_TOKENS, dir: process.env.RECON_DATA_DIR, comment: process.env.COMMENTED ?? null }));\n');
    writeFileSync(path.join(root, 'etc/bnpl-recon/env'),
      '# settings\nPROVIDER_API_KEY=ab#cd\n  OPERATOR_TOKEN=t0k#en  \nOPERATOR_TOKENS="ada:x y"\n;COMMENTED=1\n#COMMENTED=2\n');
    const rooted = path.join(root, 'bnpl-recon-rooted');
    writeFileSync(rooted, readFileSync(path.join(root, 'usr/local/bin/bnpl-recon'), 'utf8')
      .replaceAll('/opt/bnpl-recon', `${root}/opt/bnpl-recon`).replaceAll('/etc/bnpl-recon', `${root}/etc/bnpl-recon`));
    chmodSync(rooted, 0o755);
    const run = spawnSync(rooted, ['--version'], { cwd: tmpdir(), encoding: 'utf8', env: { PATH: '/usr/bin:/bin' }, timeout: 30_000 });
    expect(run.status, run.stderr).toBe(0);
    expect(JSON.parse(run.stdout)).toEqual({ key: 'ab#cd', token: 't0k#en', quoted: 'ada:x y', dir: '/var/lib/bnpl-recon', comment: null });
  });
});
