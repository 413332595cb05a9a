import { spawnSync } from 'node:child_process';
import { copyFileSync, mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { describe, expect, it } from 'vitest';

/**
 * `npm ci` refuses a lockfile that its npm would resolve differently, and npm 10 (bundled with
 * Node 22, the Docker image's base) and npm 11 (Node 24) disagree on some trees: a lockfile written
 * by npm 11 alone once lacked esbuild 0.28.2 for npm 10. Both must accept it. The dry run resolves
 * from the lockfile and the registry metadata without installing (in a scratch copy).
 */
describe('package-lock.json', () => {
  for (const npm of ['npm@10', 'npm@11']) {
    it(`is in sync for ${npm} (npm ci --dry-run)`, { timeout: 120_000 }, () => {
      const dir = mkdtempSync(path.join(tmpdir(), 'lockfile-'));
      copyFileSync('package.json', path.join(dir, 'package.json'));
      copyFileSync('package-lock.json', path.join(dir, 'package-lock.json'));
      const result = spawnSync('npx', ['-y', '-p', npm, '--', 'npm', 'ci', '--dry-run', '--ignore-scripts', '--no-audit', '--no-fund'], { cwd: dir, encoding: 'utf8' });
      expect(result.status, result.stderr.split('\n').filter((l) => l.includes('npm error')).join('\n')).toBe(0);
    });

    // A fresh clone's `npm install` must leave `git status` clean. Resolving the tree without
    // installing (--package-lock-only) rewrites the lockfile exactly as a full install would; it is
    // what once dropped vite's optional esbuild peer under npm 11 while npm 10 wanted it.
    it(`is left byte-identical by ${npm} install`, { timeout: 120_000 }, () => {
      const dir = mkdtempSync(path.join(tmpdir(), 'lockfile-'));
      copyFileSync('package.json', path.join(dir, 'package.json'));
      copyFileSync('package-lock.json', path.join(dir, 'package-lock.json'));
      const result = spawnSync('npx', ['-y', '-p', npm, '--', 'npm', 'install', '--package-lock-only', '--ignore-scripts', '--no-audit', '--no-fund'], { cwd: dir, encoding: 'utf8' });
      expect(result.status, result.stderr).toBe(0);
      expect(readFileSync(path.join(dir, 'package-lock.json'), 'utf8')).toBe(readFileSync('package-lock.json', 'utf8'));
    });
  }
});
