import { readFileSync } from 'node:fs';

export interface BuildInfo {
  version: string;
  node: string;
  /** The source revision: BNPL_RECON_REVISION, which the Docker image sets from its REVISION build argument. */
  commit: string;
}

let version: string | undefined;

/** package.json's version; the file sits two levels up from both src/app and dist/app. */
export function packageVersion(): string {
  version ??= (JSON.parse(readFileSync(new URL('../../package.json', import.meta.url), 'utf8')) as { version: string }).version;
  return version;
}

export function buildInfo(env: NodeJS.ProcessEnv = process.env): BuildInfo {
  return { version: packageVersion(), node: process.version, commit: env.BNPL_RECON_REVISION || 'unknown' };
}
