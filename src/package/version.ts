import { readFileSync } from 'node:fs';
import { packageFile } from './package-root.js';

export interface BuildInfo {
  version: string;
  node: string;
  /**
   * The source revision: BNPL_RECON_REVISION (the Docker image sets it from its REVISION build
   * argument), else the commit the build recorded in dist/build-info.json (scripts/build-info.mjs),
   * else 'unknown' (running the sources, or a build without git history).
   */
  commit: string;
}

let version: string | undefined;

/** package.json's version. */
export function packageVersion(): string {
  version ??= (JSON.parse(readFileSync(packageFile('package.json'), 'utf8')) as { version: string }).version;
  return version;
}

let builtCommit: string | undefined;

/** The commit the running build was made from, when this module runs from dist/. */
function recordedCommit(): string {
  if (builtCommit !== undefined) return builtCommit;
  builtCommit = 'unknown';
  if (import.meta.url.includes('/dist/')) {
    try {
      const info = JSON.parse(readFileSync(packageFile('dist/build-info.json'), 'utf8')) as { commit?: unknown };
      if (typeof info.commit === 'string' && info.commit !== '') builtCommit = info.commit;
    } catch {
      // A build without the file (tsc run by hand): the commit is unknown, which is what it says.
    }
  }
  return builtCommit;
}

export function buildInfo(env: NodeJS.ProcessEnv = process.env): BuildInfo {
  return { version: packageVersion(), node: process.version, commit: env.BNPL_RECON_REVISION || recordedCommit() };
}
