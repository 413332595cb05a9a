/**
 * Loaded into an ingest target with `--import` (bench/ingest/against.ts): sums the process's
 * garbage collections by kind, from Node's `gc` performance entries, and answers the IPC messages
 * `{ gcProbe: 'reset' }` (start counting afresh) and `{ gcProbe: 'read' }` (send the sums). A
 * scavenge's time grows with what survives it, so the sums show when a change makes objects live
 * longer, which throughput alone does not say.
 */
import { constants, PerformanceObserver, type PerformanceEntry } from 'node:perf_hooks';

export interface GcSums {
  scavenges: number;
  scavengeMs: number;
  markCompacts: number;
  markCompactMs: number;
}

let sums: GcSums = { scavenges: 0, scavengeMs: 0, markCompacts: 0, markCompactMs: 0 };

new PerformanceObserver((list) => {
  for (const entry of list.getEntries()) {
    const kind = (entry as PerformanceEntry & { detail?: { kind?: number } }).detail?.kind;
    if (kind === constants.NODE_PERFORMANCE_GC_MINOR) {
      sums.scavenges += 1;
      sums.scavengeMs += entry.duration;
    } else if (kind === constants.NODE_PERFORMANCE_GC_MAJOR) {
      sums.markCompacts += 1;
      sums.markCompactMs += entry.duration;
    }
  }
}).observe({ entryTypes: ['gc'] });

process.on('message', (message) => {
  const request = (message as { gcProbe?: string } | null)?.gcProbe;
  if (request === 'reset') sums = { scavenges: 0, scavengeMs: 0, markCompacts: 0, markCompactMs: 0 };
  // Entries are delivered to the observer asynchronously: answer after the ones queued so far.
  if (request === 'read') setImmediate(() => process.send?.({ gcProbe: sums }));
});
