/**
 * Another revision of this repository, runnable beside this checkout for the `--against` benchmarks
 * (bench/against.ts, bench/ingest/against.ts): its files exported with `git archive` into a folder
 * of the system's temporary directory and its dependencies installed there with
 * `npm ci --ignore-scripts` (the benchmarks run it through tsx and need no build), kept for later
 * runs.
 */
import { execFileSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { mkdtemp, rename, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

/** This checkout's root. */
export const repoRoot = fileURLToPath(new URL('../', import.meta.url));

export const git = (...args: string[]): string => execFileSync('git', args, { cwd: repoRoot, encoding: 'utf8' }).trim();

export interface Revision {
  rev: string;
  sha: string;
  subject: string;
  /** Where its files and dependencies are. */
  dir: string;
}

/** What this checkout is: HEAD, and whether tracked files differ from it. */
export function currentRevision(): { sha: string; uncommittedChanges: boolean } {
  return { sha: git('rev-parse', 'HEAD'), uncommittedChanges: git('status', '--porcelain', '--untracked-files=no') !== '' };
}

export async function checkoutRevision(rev: string): Promise<Revision> {
  const sha = git('rev-parse', '--verify', `${rev}^{commit}`);
  const subject = git('log', '-1', '--format=%s', sha);
  const dir = path.join(tmpdir(), `bnpl-recon-at-${sha.slice(0, 12)}`);
  if (existsSync(path.join(dir, 'node_modules', '.package-lock.json'))) return { rev, sha, subject, dir };
  const staging = await mkdtemp(path.join(tmpdir(), 'bnpl-recon-at-'));
  try {
    execFileSync('sh', ['-c', `git archive --format=tar "${sha}" | tar -x -C "${staging}"`], { cwd: repoRoot, stdio: ['ignore', 'inherit', 'inherit'] });
    execFileSync('npm', ['ci', '--ignore-scripts', '--no-audit', '--no-fund'], { cwd: staging, stdio: ['ignore', process.stderr, 'inherit'] });
    await rm(dir, { recursive: true, force: true });
    await rename(staging, dir);
  } catch (error) {
    await rm(staging, { recursive: true, force: true });
    throw error;
  }
  return { rev, sha, subject, dir };
}
