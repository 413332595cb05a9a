import { execFileSync } from 'node:child_process';

/**
 * Tests that need a user for whom a directory is not writable run, as root, as `nobody`. Nobody
 * must then be able to run this test's node and read the files the command loads: neither holds in
 * CI, whose checkout is a clone under a private directory (mktemp -d is 0700) and whose Node 24
 * lives in root's npm cache (`npx -p node@24`). Such a test skips there, saying so by its condition.
 */
export const isRoot = process.getuid?.() === 0;

/** As root: whether `nobody` exists, may execute process.execPath and read every one of `files`. */
export function nobodyCanRun(files: readonly string[] = []): boolean {
  if (!isRoot) return false;
  const checks = [`test -x ${JSON.stringify(process.execPath)}`, ...files.map((file) => `test -r ${JSON.stringify(file)}`)];
  try {
    execFileSync('su', ['nobody', '-s', '/bin/sh', '-c', checks.join(' && ')], { stdio: 'ignore' });
    return true;
  } catch {
    return false;
  }
}
