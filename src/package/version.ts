import { readFileSync } from 'node:fs';
import { packageFile } from './package-root.js';

export interface BuildInfo {
  version: string;
  node: string;
  /** The source revision: BNPL_RECON_REVISION, which the Docker image sets from its REVISION build argument. */
  commit: string;
}

let version: string | undefined;

/** package.json's version. */
export function packageVersion(): string {
  version ??= (JSON.parse(readFileSync(packageFile('package.json'), 'utf8')) as { version: string }).version;
  return version;
}

export function buildInfo(env: NodeJS.ProcessEnv = process.env): BuildInfo {
  return { version: packageVersion(), node: process.version, commit: env.BNPL_RECON_REVISION || 'unknown' };
}
