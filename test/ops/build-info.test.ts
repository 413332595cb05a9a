import { execFileSync } from 'node:child_process';
import { copyFileSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { REPO_ROOT } from '../e2e/cli.js';

/** The build records the commit it came from (scripts/build-info.mjs), so a release outside the container names it. */
describe('build info', () => {
  it('records the checkout\'s commit, marks a changed tree, and lets BNPL_RECON_REVISION win', () => {
    const dir = mkdtempSync(path.join(tmpdir(), 'build-info-'));
    try {
      const git = (...args: string[]) => execFileSync('git', args, { cwd: dir, encoding: 'utf8' }).trim();
      git('init', '-q');
      mkdirSync(path.join(dir, 'scripts'));
      mkdirSync(path.join(dir, 'src'));
      copyFileSync(path.join(REPO_ROOT, 'scripts/build-info.mjs'), path.join(dir, 'scripts/build-info.mjs'));
      writeFileSync(path.join(dir, 'src/a.ts'), 'export const a = 1;\n');
      git('add', '.');
      git('-c', 'user.name=t', '-c', 'user.email=t@example.invalid', 'commit', '-qm', 'x');
      const env = { ...process.env, BNPL_RECON_REVISION: '' };
      const run = (extra: Record<string, string> = {}) => {
        execFileSync(process.execPath, ['scripts/build-info.mjs'], { cwd: dir, env: { ...env, ...extra } });
        return (JSON.parse(readFileSync(path.join(dir, 'dist/build-info.json'), 'utf8')) as { commit: string }).commit;
      };
      const head = git('rev-parse', 'HEAD');
      expect(run()).toBe(head);
      writeFileSync(path.join(dir, 'src/a.ts'), 'export const a = 2;\n');
      expect(run()).toBe(`${head}-dirty`);
      expect(run({ BNPL_RECON_REVISION: 'feedbeef' })).toBe('feedbeef');
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('the built CLI prints the recorded commit with --version', () => {
    // dist/ is this checkout's build (npm install's prepare, or npm run build).
    const recorded = (JSON.parse(readFileSync(path.join(REPO_ROOT, 'dist/build-info.json'), 'utf8')) as { commit: string }).commit;
    const env = { ...process.env };
    delete env.BNPL_RECON_REVISION;
    const out = execFileSync(process.execPath, ['bin/bnpl-recon.js', '--version'], { cwd: REPO_ROOT, env, encoding: 'utf8' });
    expect(out.trim()).toMatch(new RegExp(`\\(commit ${recorded}\\)$`));
    expect(recorded).not.toBe('unknown');
  });
});
