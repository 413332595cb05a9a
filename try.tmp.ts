import { readFileSync } from 'node:fs';
import { parseStatement } from './src/statements/index.js';
for (const f of process.argv.slice(2)) {
  try {
    const p = parseStatement(readFileSync(f));
    console.log(f, p.format, p.accountIban, p.periodFrom, p.periodTo, p.sections.map((s) => s.identity));
    for (const l of p.lines) console.log(JSON.stringify(l, (_k, v) => (typeof v === 'bigint' ? v.toString() : v)));
  } catch (e) { console.log(f, 'ERROR', (e as Error).message); }
}
