/**
 * Child process for bench/statements/index.ts: one import of one file (MODE=import, into DATABASE_URL)
 * or the baseline (MODE=xml: the file through saxes alone, the XML library the CAMT reader uses,
 * with no handlers and no database; MODE=lines: the MT940 file split into lines alone), in a
 * process of its own so the peak RSS is this work's alone. Reports duration, lines, RSS and CPU:
 * this process's, and for an import its Postgres backend's (read from /proc, so only for a server
 * on this machine; null otherwise).
 */
import { createReadStream, readFileSync } from 'node:fs';
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

/** CPU seconds of a process on this machine (Linux /proc: utime + stime in USER_HZ), or null. */
function cpuSecondsOf(pid: number): number | null {
  try {
    const fields = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1]!.split(' ');
    return (Number(fields[11]) + Number(fields[12])) / 100;
  } catch {
    return null;
  }
}

let lines = 0;
let postgresCpu: number | null = null;
let t0 = performance.now();
const cpu0 = process.cpuUsage();
if (mode === 'import') {
  // One connection: the import's transaction runs on the backend whose CPU is read.
  const sql = createSqlClient(process.env.DATABASE_URL as string, { poolMax: 1 });
  const database = databaseOver(sql);
  const [backend] = await sql<{ pid: number }[]>`select pg_backend_pid() as pid`;
  const before = cpuSecondsOf(backend!.pid);
  t0 = performance.now();
  const r = await importStatementFile(database, 'sandbox', file);
  const after = cpuSecondsOf(backend!.pid);
  postgresCpu = before === null || after === null ? null : Math.round((after - before) * 100) / 100;
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
const cpu = process.cpuUsage(cpu0);
clearInterval(sampler);
// The kernel's high-water mark too: a sample every 20 ms misses peaks inside a long synchronous parse.
peakRss = Math.max(peakRss, process.memoryUsage().rss, process.resourceUsage().maxRSS * 1024);
const mib = (bytes: number) => Math.round(bytes / 2 ** 20);
process.send?.({
  durationMs: Math.round(durationMs), lines, startRssMib: mib(startRss), peakRssMib: mib(peakRss),
  nodeCpuSeconds: Math.round((cpu.user + cpu.system) / 1e4) / 100, postgresCpuSeconds: postgresCpu,
});
