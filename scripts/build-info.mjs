// Writes dist/build-info.json after `tsc`: the commit the build came from, so --version, the
// startup log line and bnpl_recon_build_info name it also outside the container. BNPL_RECON_REVISION
// (the Docker build's REVISION) wins; else `git rev-parse HEAD`, marked "-dirty" when the working
// tree differs; else "unknown" (a build from a tarball without history).
import { execFileSync } from 'node:child_process';
import { mkdirSync, writeFileSync } from 'node:fs';

function git(...args) {
  try {
    return execFileSync('git', args, { encoding: 'utf8', stdio: ['ignore', 'pipe', 'ignore'] }).trim();
  } catch {
    return undefined;
  }
}

let commit = process.env.BNPL_RECON_REVISION || undefined;
if (!commit && git('rev-parse', '--is-inside-work-tree') === 'true' && git('rev-parse', '--show-toplevel') === process.cwd()) {
  const head = git('rev-parse', 'HEAD');
  const dirty = git('status', '--porcelain', '--untracked-files=no', '--', 'src', 'sim', 'migrations', 'web', 'bin', 'package.json');
  if (head) commit = dirty ? `${head}-dirty` : head;
}
mkdirSync('dist', { recursive: true });
writeFileSync('dist/build-info.json', `${JSON.stringify({ commit: commit ?? 'unknown', builtAt: new Date().toISOString() })}\n`);
