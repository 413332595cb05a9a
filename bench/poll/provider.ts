/**
 * Child process for bench/poll/index.ts: the fake provider on its own event loop, so the poller's JSON
 * parsing and database calls cannot slow the server (or the server's rate-limit clock) down.
 * IPC: {cmd:'stats'} -> stats; {cmd:'reset'} clears counters; {cmd:'close'} exits.
 */
import { FakeProvider } from '../../test/provider/fake-provider.js';

const orders = Number(process.env.BENCH_ORDERS ?? 100_000);
const provider = new FakeProvider({ apiKey: process.env.BENCH_API_KEY ?? 'bench-key', orders, rateLimit: 500, retryAfter: 'seconds' });
// Page bodies built ahead: the provider shares the 2 cores with the poller and Postgres, and
// building 500 answers/s on the fly cost it ~0.8 s of CPU per full poll (the rate limit is
// enforced exactly as before, on every request).
provider.precomputePages(Number(process.env.BENCH_PAGE_SIZE ?? 100));
const url = await provider.listen();
process.send?.({ url });
// CPU since the last reset: what serving one poll cost the machine the poller shares.
let cpuAtReset = process.cpuUsage();
process.on('message', (message: { cmd: string }) => {
  if (message.cmd === 'stats') {
    const cpu = process.cpuUsage(cpuAtReset);
    process.send?.({ stats: { ...provider.stats, registrations: undefined, cpuS: (cpu.user + cpu.system) / 1e6 } });
  }
  if (message.cmd === 'reset') {
    cpuAtReset = process.cpuUsage();
    Object.assign(provider.stats, { requests: 0, accepted: 0, throttled: 0, unauthorized: 0, faults: 0, pages: 0 });
    process.send?.({ reset: true });
  }
  if (message.cmd === 'close') void provider.close().then(() => process.exit(0));
});
process.on('disconnect', () => process.exit(0));
