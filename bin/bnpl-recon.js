#!/usr/bin/env node
// Runs the compiled CLI; `npm install` builds dist/ through the prepare script.
import { existsSync, readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';

// `#!/usr/bin/env node` runs whichever node is first on PATH (Debian 12's is 18): refuse an older
// Node than package.json's engines with a clear message and exit 2 (a configuration error, which
// systemd's RestartPreventExitStatus=2 does not restart) rather than failing later on a missing API.
const engines = JSON.parse(readFileSync(new URL('../package.json', import.meta.url), 'utf8')).engines?.node ?? '';
const wanted = /(\d+)\.(\d+)/.exec(engines);
const [major, minor] = process.versions.node.split('.').map(Number);
if (wanted && (major < Number(wanted[1]) || (major === Number(wanted[1]) && minor < Number(wanted[2])))) {
  process.stderr.write(`bnpl-recon: Node ${process.versions.node} at ${process.execPath} is older than the supported ${engines}; put a newer node first on PATH\n`);
  process.exit(2);
}

const compiled = new URL('../dist/src/cli.js', import.meta.url);
if (!existsSync(fileURLToPath(compiled))) {
  process.stderr.write('bnpl-recon: dist/ is missing; run `npm run build` (npm install does it) first\n');
  process.exit(1);
}
const { runAsProcess } = await import(compiled.href);
await runAsProcess(process.argv.slice(2));
