/**
 * Child process for bench/statements/index.ts: one import of one file (MODE=import, into DATABASE_URL)
 * or the baseline (MODE=xml: the file through saxes alone, the XML library the CAMT reader uses,
 * with no handlers and no database; MODE=lines: the MT940 file split into lines alone), in a
 * process of its own so the peak RSS is this work's alone. Reports duration, lines and RSS.
 */
import { createReadStream } from 'node:fs';
import { SaxesParser } from 'saxes';
import { createSqlClient, databaseOver } from '../../src/db/database.js';
import { importStatementFile } from '../../src/statements/import.js';

const file = process.env.FILE as string;
const mode = process.env.MODE as 'import' | 'xml' | 'lines';
const startRss = process.memoryUsage().rss;
let peakRss = startRss;
const sampler = setInterval(() => {
  peakRss = Math.max(peakRss, process.memoryUsage().rss);
}, 20);

const t0 = performance.now();
let lines = 0;
if (mode === 'import') {
  const sql = createSqlClient(process.env.DATABASE_URL as string, { poolMax: 2 });
  const database = databaseOver(sql);
  const r = await importStatementFile(database, 'sandbox', file);
  lines = r.linesNew;
  await database.close();
} else if (mode === 'xml') {
  const parser = new SaxesParser({ xmlns: false });
  parser.on('opentag', (tag) => {
    if (tag.name === 'Ntry') lines += 1;
  });
  for await (const chunk of createReadStream(file, { encoding: 'utf8', highWaterMark: 1 << 20 })) parser.write(chunk as string);
  parser.close();
} else {
  let rest = '';
  for await (const chunk of createReadStream(file, { encoding: 'latin1', highWaterMark: 1 << 20 })) {
    const parts = (rest + (chunk as string)).split('\r\n');
    rest = parts.pop() ?? '';
    for (const p of parts) if (p.startsWith(':61:')) lines += 1;
  }
}
const durationMs = performance.now() - t0;
clearInterval(sampler);
peakRss = Math.max(peakRss, process.memoryUsage().rss);
const mib = (bytes: number) => Math.round(bytes / 2 ** 20);
process.send?.({ durationMs: Math.round(durationMs), lines, startRssMib: mib(startRss), peakRssMib: mib(peakRss) });
