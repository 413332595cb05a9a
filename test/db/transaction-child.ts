import postgres from 'postgres';
import { transaction } from '../../src/db/transaction.js';

/**
 * A child of test/db/transaction.test.ts: three transactions whose backend is terminated while a
 * query of theirs runs, through postgres.js's own begin() or through transaction(), then three
 * rounds of queries on the same pool. Prints one JSON line; a crash shows as its exit status and
 * stderr. A child, because the crash it looks for ends the process it happens in.
 */
const [url, how] = process.argv.slice(2) as [string, 'begin' | 'transaction'];
const sql = postgres(url, { max: 2, onnotice: () => {} });
const admin = postgres(url, { max: 1, onnotice: () => {} });
const rejected: (string | undefined)[] = [];
const after: (number | string)[][] = [];
for (let i = 0; i < 3; i += 1) {
  const body = async (tx: postgres.TransactionSql) => {
    const [row] = await tx<{ pid: number }[]>`select pg_backend_pid() as pid`;
    setTimeout(() => void admin`select pg_terminate_backend(${row!.pid})`.catch(() => undefined), 100);
    await tx`select pg_sleep(5)`;
  };
  await (how === 'begin' ? sql.begin(body) : transaction(sql, body)).then(
    () => rejected.push('not rejected'),
    (error: unknown) => rejected.push((error as { code?: string }).code),
  );
  for (let k = 0; k < 3; k += 1) {
    const answers = await Promise.allSettled([sql`select 1 as x`, sql`select 2 as x`, transaction(sql, (tx) => tx`select 3 as x`)]);
    after.push(answers.map((a) => (a.status === 'fulfilled' ? Number(a.value[0]!.x) : String((a.reason as { code?: string }).code))));
  }
}
// Long enough for a deferred write to have run.
await new Promise((resolve) => setTimeout(resolve, 1500));
process.stdout.write(`${JSON.stringify({ rejected, after })}\n`);
await Promise.all([sql.end({ timeout: 2 }), admin.end({ timeout: 2 })]);
