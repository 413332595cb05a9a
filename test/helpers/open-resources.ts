import { afterAll } from 'vitest';

/**
 * Fails a test file that leaves a server listening, a child process running or a socket (a pool's
 * connection, a client's keep-alive, an accepted connection) open once its own afterAll hooks ran.
 * Loaded by vitest.config.ts as a setup file, so its hook is registered first and, vitest running
 * after-hooks in reverse ("stack", the default), runs after the file's own cleanup. Each file runs
 * in a process of its own (pool 'forks', isolated), so what is open at its end is the file's.
 *
 * Judged per file, not per test: several files start a daemon inside a test and stop it in
 * afterAll, so a failed assertion cannot skip the stop; and a pool made in beforeAll connects
 * lazily during whichever test first queries. Handles a file unref'd (an embedded Postgres's
 * child, src/db/embedded.ts) are not listed by Node and not judged.
 */
const KINDS = {
  TCPServerWrap: 'listening TCP server',
  PipeServerWrap: 'listening pipe server',
  ProcessWrap: 'child process',
  TCPSocketWrap: 'TCP socket',
} as const;
type Kind = keyof typeof KINDS;
const WATCHED = Object.keys(KINDS) as Kind[];

/** How long closing may take to show: server.close() and socket ends complete on later ticks. */
const SETTLE_MS = 3_000;

export function countOpen(kinds: readonly Kind[], resources: readonly string[] = process.getActiveResourcesInfo()): Map<Kind, number> {
  const counts = new Map<Kind, number>(kinds.map((kind) => [kind, 0]));
  for (const resource of resources) if (counts.has(resource as Kind)) counts.set(resource as Kind, counts.get(resource as Kind)! + 1);
  return counts;
}

/** What is open, in words; empty when nothing is. */
export function describeOpen(counts: Map<Kind, number>): string {
  const parts: string[] = [];
  for (const [kind, count] of counts) if (count > 0) parts.push(`${count} ${KINDS[kind]}${count === 1 ? '' : 's'} (${kind})`);
  return parts.join(', ');
}

async function settled(kinds: readonly Kind[]): Promise<string> {
  const until = Date.now() + SETTLE_MS;
  for (;;) {
    const open = describeOpen(countOpen(kinds));
    if (open === '' || Date.now() > until) return open;
    await new Promise((resolve) => setTimeout(resolve, 25));
  }
}

afterAll(async () => {
  const open = await settled(WATCHED);
  if (open) throw new Error(`this test file left open after its afterAll hooks: ${open}; end its pools (database.close()), servers, clients and child processes`);
});
