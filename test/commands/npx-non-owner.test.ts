import { spawnSync } from 'node:child_process';
import { chownSync, existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync } from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { REPO_ROOT } from '../e2e/cli.js';
import { isRoot, nobodyCanRun } from '../helpers/as-nobody.js';

/**
 * A user who does not own the checkout (root's, here run as `nobody`) runs the CLI it built. Our
 * part must write nothing there: scripts/prepare.mjs skips the build it cannot write, and the bin
 * runs dist/. `npx bnpl-recon` in the checkout also makes npm install the checkout as a link into
 * the user's npx cache, and npm's bin-links then chmods the linked bin/bnpl-recon.js, which only its
 * owner may do: before bin-links 7.0 (npm/bin-links#145, fixed by #171; npm 12 bundles it, npm 11
 * does not) unconditionally, so npx fails with EPERM before any of our code runs. That outcome is
 * accepted only from such an npm: with a bin-links that skips the chmod of an executable bin, npx
 * must work.
 */
const bin = path.join(REPO_ROOT, 'bin/bnpl-recon.js');
// The npm on PATH, as the script it links to (/usr/bin/npm -> ../lib/node_modules/npm/bin/npm-cli.js).
const npmCli = (() => {
  const found = spawnSync('sh', ['-c', 'readlink -f "$(command -v npm)"'], { encoding: 'utf8' }).stdout.trim();
  return found.endsWith('npm-cli.js') ? found : undefined;
})();
const files = [bin, path.join(REPO_ROOT, 'dist/src/cli.js'), path.join(REPO_ROOT, 'scripts/prepare.mjs'), ...(npmCli ? [npmCli] : [])];
// As root only (the checkout must be another user's), and only where nobody can run node and read these.
const runnable = isRoot && npmCli !== undefined && statSync(REPO_ROOT).uid === 0 && nobodyCanRun(files);

/** bin-links' major version in the npm that runs npx (its chmod of a bin is unconditional before 7). */
function binLinksMajor(): number {
  const manifest = createRequire(npmCli!).resolve('bin-links/package.json');
  return Number((JSON.parse(readFileSync(manifest, 'utf8')) as { version: string }).version.split('.')[0]);
}

const home = runnable ? mkdtempSync(path.join(tmpdir(), 'npx-non-owner-')) : '';
if (runnable) chownSync(home, 65534, 65534);
afterAll(() => {
  if (home) rmSync(home, { recursive: true, force: true });
});

function asNobody(command: string): { status: number | null; stdout: string; stderr: string } {
  const env = `HOME=${JSON.stringify(home)} PATH=${JSON.stringify(`${path.dirname(process.execPath)}:/usr/bin:/bin`)} npm_config_update_notifier=false npm_config_audit=false npm_config_fund=false`;
  const result = spawnSync('su', ['nobody', '-s', '/bin/sh', '-c', `cd ${JSON.stringify(REPO_ROOT)} && ${env} ${command}`], { encoding: 'utf8', env: { PATH: process.env.PATH ?? '/usr/bin:/bin' }, timeout: 60_000 });
  return { status: result.status, stdout: result.stdout, stderr: result.stderr };
}

/**
 * What a command could have written in the checkout: the names at its top (a data directory, a
 * cache), dist/'s files with their modification times (a build), node_modules/.cache. Not the
 * times of the other top-level entries: the checkout is a working tree that may change meanwhile.
 */
function checkoutState(): string[] {
  const dist = path.join(REPO_ROOT, 'dist');
  const built = readdirSync(dist, { recursive: true, encoding: 'utf8' }).map((name) => `dist/${name} ${statSync(path.join(dist, name)).mtimeMs}`);
  return [...readdirSync(REPO_ROOT), ...built, `node_modules/.cache ${existsSync(path.join(REPO_ROOT, 'node_modules/.cache'))}`].sort();
}

const VERSION = /^bnpl-recon \d+\.\d+\.\d+ \(commit [^)]+\)\n$/;

describe.skipIf(!runnable)('the CLI run by a user who does not own the checkout', () => {
  it('bin/bnpl-recon.js runs the built CLI and writes nothing in the checkout', () => {
    const before = checkoutState();
    const result = asNobody(`exec ${JSON.stringify(process.execPath)} bin/bnpl-recon.js --version`);
    expect(result.status, result.stderr).toBe(0);
    expect(result.stdout).toMatch(VERSION);
    expect(checkoutState()).toEqual(before);
  });

  it('npx bnpl-recon runs it too, unless npm itself refuses (its chmod of the linked bin, bin-links before 7)', { timeout: 90_000 }, () => {
    const before = checkoutState();
    const result = asNobody(`exec ${JSON.stringify(process.execPath)} ${JSON.stringify(npmCli!)} exec -- bnpl-recon --version`);
    expect(checkoutState()).toEqual(before);
    if (result.status === 0) {
      expect(result.stdout).toMatch(VERSION);
      return;
    }
    // npm's own failure: it names the chmod of our bin through the npx cache's link to the checkout.
    expect(result.stderr).toMatch(/npm error code EPERM\nnpm error syscall chmod\nnpm error path .*\/_npx\/[0-9a-f]+\/node_modules\/bnpl-recon\/bin\/bnpl-recon\.js\n/);
    expect(binLinksMajor(), 'an npm whose bin-links skips the chmod of an executable bin must run it').toBeLessThan(7);
  });
});
