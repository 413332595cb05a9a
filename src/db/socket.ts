import net from 'node:net';

/** What postgres.js hands its `socket` option: the client's parsed hosts (in order), ports and Unix socket path. */
export interface SocketTarget {
  host: readonly string[];
  port: readonly number[];
  path?: string | false | undefined;
}

/** A socket as postgres.js uses it: it reads `host` and `port` for TLS's server name and its error messages. */
type LedgerSocket = net.Socket & { host?: string; port?: number };

/**
 * The connections' sockets, with Nagle's algorithm off (TCP_NODELAY), as libpq and node-postgres
 * open theirs. postgres.js 3.4.9 leaves it on, and a write that follows one the server has not yet
 * acknowledged then waits for the server's delayed acknowledgement, about 40 ms on Linux, whenever
 * the server has nothing to answer with: in every COPY (its rows get no answer until its end), and
 * between two queries sent back to back. An import of 100,000 MT940 lines spent half its time idle
 * on both sides: 5.3-6.0 s with it on, 3.5-4.2 s with it off (bench/README.md, statements).
 *
 * postgres.js does not connect a socket it is given, so this connects it: to the host of the URL
 * this client uses now, which moves to the next host each time a connection to it ends before it
 * was established (refused, unreachable, or destroyed by postgres.js's connect timeout, as a host
 * that vanished without a reset is). So connections go to the first host that answers, in the
 * order given, which writable-host.ts relies on; postgres.js's own rotation also moved a connection
 * that had worked to the next host at its every reconnect. The socket is returned while it
 * connects; postgres.js's connect timeout covers the rest.
 */
export function noDelaySockets(): (target: SocketTarget) => net.Socket {
  const current = new WeakMap<SocketTarget, number>();
  return (target) => {
    if (target.path) return net.connect(target.path);
    const index = (current.get(target) ?? 0) % target.host.length;
    const host = target.host[index]!;
    const port = target.port[index] ?? target.port[0]!;
    const socket: LedgerSocket = new net.Socket();
    // Set before connecting, and applied as the connection is established.
    socket.setNoDelay(true);
    socket.connect(port, host);
    socket.host = host;
    socket.port = port;
    let established = false;
    socket.once('connect', () => {
      established = true;
    });
    socket.once('close', () => {
      if (!established) current.set(target, index + 1);
    });
    return socket;
  };
}
