import { execFileSync, spawnSync } from 'node:child_process';
import { chmodSync, copyFileSync, mkdirSync, mkdtempSync, readFileSync, rmSync, utimesSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { REPO_ROOT } from './e2e/cli.js';
import { isRoot, nobodyCanRun } from './helpers/as-nobody.js';

/**
 * `npx bnpl-recon` in the checkout installs the checkout itself into the user's npx cache (npm 11's
 * libnpmexec does so for a bin of the project's own package.json), which runs `prepare`. It was
 * `tsc`: every fresh npx cache rebuilt dist/, and a user who cannot write dist/ got exit 2 and not a
 * word. scripts/prepare.mjs builds only when dist/ is older than its sources, and skips, saying why,
 * when this user cannot write it. Checked on a project of its own (no typescript to resolve: a
 * build attempted would fail).
 */
// As root the script runs as nobody (see test/helpers/as-nobody.ts for where that cannot be).
const nobodyRunsNode = nobodyCanRun();

let dir: string | undefined;
afterEach(() => {
  if (dir) {
    execFileSync('chmod', ['-R', 'u+w', dir]);
    rmSync(dir, { recursive: true, force: true });
  }
  dir = undefined;
});

/** A project with sources last changed at `sourcesAt` and a build finished at `builtAt` (seconds). */
function project(sourcesAt: number, builtAt: number): string {
  const root = mkdtempSync(path.join(tmpdir(), 'npx-prepare-'));
  chmodSync(root, 0o755);
  for (const sub of ['scripts', 'src', 'sim', 'dist/src']) mkdirSync(path.join(root, sub), { recursive: true });
  for (const script of ['prepare.mjs', 'build-info.mjs']) copyFileSync(path.join(REPO_ROOT, 'scripts', script), path.join(root, 'scripts', script));
  const sources = ['tsconfig.json', 'tsconfig.build.json', 'src/cli.ts', 'sim/simulator.ts'];
  for (const file of sources) writeFileSync(path.join(root, file), '{}\n');
  for (const file of sources) utimesSync(path.join(root, file), sourcesAt, sourcesAt);
  writeFileSync(path.join(root, 'dist/src/cli.js'), '');
  writeFileSync(path.join(root, 'dist/build-info.json'), '{"commit":"old","builtAt":"then"}\n');
  utimesSync(path.join(root, 'dist/build-info.json'), builtAt, builtAt);
  execFileSync('chmod', ['-R', 'a+rX', root]);
  return root;
}

function prepare(root: string, asNobody = false): { status: number | null; stderr: string } {
  const result = asNobody
    ? spawnSync('su', ['nobody', '-s', '/bin/sh', '-c', `cd / && exec ${JSON.stringify(process.execPath)} ${JSON.stringify(path.join(root, 'scripts/prepare.mjs'))}`], { encoding: 'utf8', env: { PATH: process.env.PATH ?? '/usr/bin:/bin' } })
    : spawnSync(process.execPath, [path.join(root, 'scripts/prepare.mjs')], { cwd: '/', encoding: 'utf8' });
  return { status: result.status, stderr: result.stderr.trim() };
}

describe('npm prepare (scripts/prepare.mjs)', () => {
  it('skips the build when dist/ is newer than src/ and sim/, only recording the commit', () => {
    dir = project(1_000_000, 2_000_000);
    expect(prepare(dir)).toEqual({ status: 0, stderr: 'bnpl-recon prepare: dist/ is newer than src/ and sim/: skipping the build, recording the commit' });
    expect(JSON.parse(readFileSync(path.join(dir, 'dist/build-info.json'), 'utf8'))).toMatchObject({ commit: 'unknown' });
  });

  it('builds when a source is newer than dist/ (here: fails, no typescript to build with)', () => {
    dir = project(2_000_000, 1_000_000);
    expect(prepare(dir).status).not.toBe(0);
  });

  it.skipIf(isRoot && !nobodyRunsNode)('skips the build, exit 0 and saying why, when this user cannot write dist/', () => {
    dir = project(2_000_000, 1_000_000);
    if (!isRoot) execFileSync('chmod', ['-R', 'a-w', path.join(dir, 'dist')]);
    const result = prepare(dir, isRoot);
    expect(result).toEqual({ status: 0, stderr: expect.stringMatching(/^bnpl-recon prepare: dist\/ is older than src\/ or sim\/, but .+ cannot write dist: skipping the build; run 'npm run build' as the checkout's owner$/) });
  });
});
