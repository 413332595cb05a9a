import postgres from 'postgres';
import { surviveNullSocketWrite } from '../../src/db/null-socket-write.js';

/**
 * A child of test/db/null-socket-write.test.ts, with surviveNullSocketWrite installed.
 * `begin`: three transactions through postgres.js's own begin() whose backend is terminated while a
 * query of theirs runs (the ROLLBACK that follows is the write to a closed connection: see
 * test/db/transaction.test.ts, where it ends the process), each defect answered as the daemon does
 * (new connections), then three rounds of queries. Prints one JSON line.
 * `other`: any other uncaught exception still ends the process.
 */
const [url, mode] = process.argv.slice(2) as [string, 'begin' | 'other'];
const options = { max: 2, connect_timeout: 2, onnotice: () => {} };
let sql = postgres(url, options);
const admin = postgres(url, { max: 1, onnotice: () => {} });
const defects: string[] = [];
surviveNullSocketWrite((error) => {
  defects.push(error.message);
  const old = sql;
  sql = postgres(url, options);
  void old.end({ timeout: 1 }).catch(() => undefined);
});
if (mode === 'other') {
  setImmediate(() => {
    throw new Error('not a postgres.js defect');
  });
  await new Promise((resolve) => setTimeout(resolve, 1000));
  process.stdout.write('still running\n');
  process.exit(0);
}
const rejected: (string | undefined)[] = [];
const after: (number | string)[][] = [];
for (let i = 0; i < 3; i += 1) {
  await sql
    .begin(async (tx) => {
      const [row] = await tx<{ pid: number }[]>`select pg_backend_pid() as pid`;
      setTimeout(() => void admin`select pg_terminate_backend(${row!.pid})`.catch(() => undefined), 100);
      await tx`select pg_sleep(5)`;
    })
    .then(
      () => rejected.push('not rejected'),
      (error: unknown) => rejected.push((error as { code?: string }).code),
    );
  // Long enough for the deferred write to have run.
  await new Promise((resolve) => setTimeout(resolve, 300));
  const answers = await Promise.allSettled([sql`select 1 as x`, sql`select 2 as x`]);
  after.push(answers.map((a) => (a.status === 'fulfilled' ? Number(a.value[0]!.x) : String((a.reason as { code?: string }).code))));
}
process.stdout.write(`${JSON.stringify({ defects, rejected, after })}\n`);
await Promise.all([sql.end({ timeout: 2 }), admin.end({ timeout: 2 })]);
