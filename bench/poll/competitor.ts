/**
 * Child process for bench/poll/index.ts: another client of the merchant's on the same IP, spending
 * BENCH_COMPETITOR_RPS of the provider's 500/s on tiny requests, paced evenly and deaf to 429s
 * (it neither backs off nor retries), so it takes its share whatever the poller does.
 */
import { Pool } from 'undici';

const url = new URL(process.env.BENCH_PROVIDER_URL!);
const rps = Number(process.env.BENCH_COMPETITOR_RPS ?? 250);
const pool = new Pool(url.origin, { connections: 8 });
const counts = { sent: 0, ok: 0, throttled: 0, other: 0 };
let stopping = false;
process.on('message', (message: { cmd: string }) => {
  if (message.cmd === 'stop') stopping = true;
});
process.on('disconnect', () => process.exit(0));
const start = performance.now();
const inflight = new Set<Promise<void>>();
// Bounded: at most 10 minutes, whatever the parent does.
while (!stopping && performance.now() - start < 600_000) {
  const due = start + (counts.sent * 1000) / rps;
  const wait = due - performance.now();
  if (wait > 0) await new Promise((r) => setTimeout(r, wait));
  counts.sent += 1;
  const request = pool
    .request({ path: '/api/v1/orders?page=1&per_page=1', method: 'GET', headers: { 'api-token': process.env.BENCH_API_KEY ?? 'bench-key' } })
    .then(async (res) => {
      await res.body.dump();
      if (res.statusCode === 200) counts.ok += 1;
      else if (res.statusCode === 429) counts.throttled += 1;
      else counts.other += 1;
    })
    .catch(() => {
      counts.other += 1;
    })
    .finally(() => inflight.delete(request));
  inflight.add(request);
  if (counts.sent === 1) process.send?.({ started: true });
}
await Promise.allSettled([...inflight]);
process.send?.({ counts, seconds: (performance.now() - start) / 1000 });
await pool.close();
process.disconnect?.();
