import { connect, createServer, type Server, type Socket } from 'node:net';

/**
 * A TCP proxy on loopback to a Postgres server. `blackhole()` makes every connection open now a
 * half-open one as a failover leaves it (the primary's IP moved, a partition): nothing is
 * forwarded either way any more and no close or reset reaches the client. Connections opened
 * later go to `retarget`'s port when set (a virtual IP or a -rw Service now pointing elsewhere).
 * `freeze()` does the same to every connection, later ones included: a primary frozen or
 * partitioned away that nothing replaces.
 */
export interface Proxy {
  url: string;
  blackhole(): void;
  freeze(): void;
  retarget(port: number): void;
  close(): Promise<void>;
}

export async function startProxy(target: URL): Promise<Proxy> {
  const sockets = new Set<Socket>();
  const live = new Set<{ holed: boolean }>();
  let port = Number(target.port || 5432);
  let frozen = false;
  const server: Server = createServer((client) => {
    const state = { holed: frozen };
    live.add(state);
    sockets.add(client);
    const upstream = connect(port, target.hostname);
    sockets.add(upstream);
    client.on('data', (chunk) => {
      if (!state.holed) upstream.write(chunk);
    });
    upstream.on('data', (chunk) => {
      if (!state.holed) client.write(chunk);
    });
    client.on('error', () => undefined).on('close', () => {
      sockets.delete(client);
      if (!state.holed) upstream.destroy();
    });
    upstream.on('error', () => undefined).on('close', () => {
      sockets.delete(upstream);
      if (!state.holed) client.destroy();
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const address = server.address();
  if (address === null || typeof address === 'string') throw new Error('the proxy has no port');
  const url = new URL(target);
  url.hostname = '127.0.0.1';
  url.port = String(address.port);
  return {
    url: url.toString(),
    blackhole: () => {
      for (const state of live) state.holed = true;
      live.clear();
    },
    freeze: () => {
      frozen = true;
      for (const state of live) state.holed = true;
      live.clear();
    },
    retarget: (next) => {
      port = next;
    },
    close: () => {
      for (const socket of sockets) socket.destroy();
      return new Promise((resolve) => server.close(() => resolve()));
    },
  };
}
