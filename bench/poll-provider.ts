/**
 * Child process for bench/poll.ts: the fake provider on its own event loop, so the poller's JSON
 * parsing and database calls cannot slow the server (or the server's rate-limit clock) down.
 * IPC: {cmd:'stats'} -> stats; {cmd:'reset'} clears counters; {cmd:'close'} exits.
 */
import { FakeProvider } from '../test/provider/fake-provider.js';

const orders = Number(process.env.BENCH_ORDERS ?? 100_000);
const provider = new FakeProvider({ apiKey: process.env.BENCH_API_KEY ?? 'bench-key', orders, rateLimit: 500, retryAfter: 'seconds' });
const url = await provider.listen();
process.send?.({ url });
process.on('message', (message: { cmd: string }) => {
  if (message.cmd === 'stats') process.send?.({ stats: { ...provider.stats, registrations: undefined } });
  if (message.cmd === 'reset') {
    Object.assign(provider.stats, { requests: 0, accepted: 0, throttled: 0, unauthorized: 0, faults: 0, pages: 0 });
    process.send?.({ reset: true });
  }
  if (message.cmd === 'close') void provider.close().then(() => process.exit(0));
});
process.on('disconnect', () => process.exit(0));
