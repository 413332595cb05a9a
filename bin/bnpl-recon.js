#!/usr/bin/env node
// Runs the compiled CLI; `npm install` builds dist/ through the prepare script.
import { existsSync } from 'node:fs';
import { fileURLToPath } from 'node:url';

const compiled = new URL('../dist/cli.js', import.meta.url);
if (!existsSync(fileURLToPath(compiled))) {
  process.stderr.write('bnpl-recon: dist/ is missing; run `npm run build` (npm install does it) first\n');
  process.exit(1);
}
const { main } = await import(compiled.href);
process.exitCode = await main(process.argv.slice(2));
