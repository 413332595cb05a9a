/**
 * How long the receiver's ledger commits take right now, for work that must yield to them (the
 * daemon's reparse, src/reparse/pace.ts). Every commit of the group commit shares the one WAL of the
 * server: a commit waits until all WAL written before it, by anyone, is flushed. While reparse ran
 * beside ingest at 1,000/s, the receiver's backend spent most of its active time in IO/WALSync and
 * LWLock/WALWrite and none waiting on a lock (pg_stat_activity sampled every 50 ms,
 * bench/README.md, reparse); its commit time is the measure of what reparse costs it.
 */
export class RecentCommits {
  private readonly at: number[] = [];
  private readonly ms: number[] = [];
  private next = 0;

  /** Keeps the last `size` commits: at 1,000 deliveries/s in batches of 1-5, ~0.1-0.5 s of them. */
  constructor(private readonly size = 256) {}

  record(ms: number, at = performance.now()): void {
    this.at[this.next] = at;
    this.ms[this.next] = ms;
    this.next = (this.next + 1) % this.size;
  }

  /** The slowest of the commits that finished at or after `since` (performance.now() time), 0 if none. */
  worstSince(since: number): number {
    let worst = 0;
    for (let i = 0; i < this.at.length; i += 1) if ((this.at[i] as number) >= since) worst = Math.max(worst, this.ms[i] as number);
    return worst;
  }
}
