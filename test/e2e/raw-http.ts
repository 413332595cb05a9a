import { connect } from 'node:net';

/** One HTTP/1.1 exchange over a raw socket, for framing no HTTP client would send. */
export interface RawPlan {
  /** written in order, `gapMs` apart (a slow client) */
  chunks: Buffer[];
  gapMs: number;
  /** after the last chunk: wait for the server to close, half-close our side, or hold silently */
  then: 'wait' | 'half-close' | 'hold';
  /** the client gives up (destroys the socket) after this */
  limitMs: number;
}

export interface RawResponse {
  status: number;
  headers: Record<string, string>;
  body: Buffer;
}

export interface RawExchange {
  responses: RawResponse[];
  /** from the first byte written to the server's close (or our giving up) */
  ms: number;
  closedByServer: boolean;
  error?: string;
}

export function exchange(port: number, plan: RawPlan): Promise<RawExchange> {
  return new Promise((resolve) => {
    const socket = connect(port, '127.0.0.1');
    const received: Buffer[] = [];
    let started = 0;
    let error: string | undefined;
    let settled = false;
    const giveUp = setTimeout(() => finish(false), plan.limitMs);
    const finish = (byServer: boolean) => {
      if (settled) return;
      settled = true;
      clearTimeout(giveUp);
      socket.destroy();
      resolve({ responses: parseResponses(Buffer.concat(received)), ms: performance.now() - started, closedByServer: byServer, ...(error ? { error } : {}) });
    };
    socket.on('data', (d: Buffer) => received.push(d));
    // A reset while we still write (the server refused and closed early) is an answer too.
    socket.on('error', (e: NodeJS.ErrnoException) => (error = e.code ?? e.message));
    socket.on('close', () => finish(true));
    socket.on('connect', async () => {
      started = performance.now();
      for (const [i, chunk] of plan.chunks.entries()) {
        if (settled || socket.destroyed) return;
        if (i > 0 && plan.gapMs > 0) await new Promise((r) => setTimeout(r, plan.gapMs));
        socket.write(chunk);
      }
      if (plan.then === 'half-close' && !socket.destroyed) socket.end();
    });
  });
}

/** Responses in a byte stream: status line, headers, then Content-Length bytes (none when absent). */
export function parseResponses(bytes: Buffer): RawResponse[] {
  const out: RawResponse[] = [];
  let at = 0;
  for (;;) {
    const end = bytes.indexOf('\r\n\r\n', at);
    if (end < 0) return out;
    const [statusLine, ...lines] = bytes.subarray(at, end).toString('latin1').split('\r\n');
    const status = Number(/^HTTP\/1\.[01] (\d{3})/.exec(statusLine ?? '')?.[1] ?? NaN);
    const headers: Record<string, string> = {};
    for (const line of lines) {
      const colon = line.indexOf(':');
      if (colon > 0) headers[line.slice(0, colon).trim().toLowerCase()] = line.slice(colon + 1).trim();
    }
    const length = Number(headers['content-length'] ?? 0);
    out.push({ status, headers, body: bytes.subarray(end + 4, end + 4 + length) });
    at = end + 4 + length;
  }
}
