import net from 'node:net';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { createSqlClient } from '../../src/db/database.js';
import { freePort } from '../../src/db/embedded.js';
import { noDelaySockets, type SocketTarget } from '../../src/db/socket.js';
import { serverUrl } from '../helpers/database.js';

/** A loopback server that closes every connection it takes. */
async function listening(): Promise<{ port: number; close(): void }> {
  const server = net.createServer((s) => s.end());
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return { port: (server.address() as net.AddressInfo).port, close: () => server.close() };
}

// A refused socket counts once closed: postgres.js reconnects from its 'close', which follows the 'error'.
const settled = (socket: net.Socket) =>
  new Promise<'connected' | 'refused'>((resolve) => {
    socket.once('connect', () => resolve('connected'));
    socket.once('error', () => socket.once('close', () => resolve('refused')));
  });

describe('the ledger connections’ sockets (db/socket.ts)', () => {
  const opened: net.Socket[] = [];
  afterEach(() => {
    vi.restoreAllMocks();
    for (const s of opened.splice(0)) s.destroy();
  });

  it('turns Nagle’s algorithm off before connecting', async () => {
    const setNoDelay = vi.spyOn(net.Socket.prototype, 'setNoDelay');
    const server = await listening();
    const { port } = server;
    try {
      const socket = noDelaySockets()({ host: ['127.0.0.1'], port: [port] });
      opened.push(socket);
      expect(setNoDelay).toHaveBeenCalledWith(true);
      expect(setNoDelay.mock.contexts[0]).toBe(socket);
      expect(await settled(socket)).toBe('connected');
      expect(socket.remotePort).toBe(port);
      expect((socket as net.Socket & { host?: string }).host).toBe('127.0.0.1');
    } finally {
      server.close();
    }
  });

  it('moves to the next host only after a connection to the current one failed', async () => {
    const refused = await freePort();
    const server = await listening();
    const { port } = server;
    try {
      const target: SocketTarget = { host: ['127.0.0.1', '127.0.0.1'], port: [refused, port] };
      const sockets = noDelaySockets();
      const first = sockets(target);
      opened.push(first);
      expect(await settled(first)).toBe('refused');
      for (let i = 0; i < 2; i += 1) {
        const next = sockets(target);
        opened.push(next);
        expect(await settled(next)).toBe('connected');
        expect(next.remotePort).toBe(port);
      }
      // Another client's hosts keep their own place.
      const other = sockets({ host: ['127.0.0.1', '127.0.0.1'], port: [port, refused] });
      opened.push(other);
      expect(await settled(other)).toBe('connected');
      expect(other.remotePort).toBe(port);
    } finally {
      server.close();
    }
  });

  it('moves to the next host after a connection destroyed before it was established (a connect timeout)', async () => {
    const server = await listening();
    const other = await listening();
    try {
      const target: SocketTarget = { host: ['127.0.0.1', '127.0.0.1'], port: [server.port, other.port] };
      const sockets = noDelaySockets();
      /** Destroys `socket` (no error, as postgres.js's connect timeout does), then opens the next and says where it connected. */
      const destroyThenNext = async (socket: net.Socket) => {
        socket.destroy();
        await new Promise((resolve) => socket.once('close', resolve));
        const next = sockets(target);
        opened.push(next);
        expect(await settled(next)).toBe('connected');
        return next;
      };
      // Destroyed while still connecting: the next connection goes to the other host.
      const next = await destroyThenNext(sockets(target));
      expect(next.remotePort).toBe(other.port);
      // Destroyed once established: the client stays on that host.
      const again = await destroyThenNext(next);
      expect(again.remotePort).toBe(other.port);
    } finally {
      server.close();
      other.close();
    }
  });

  it('reaches the ledger through a URL whose first host refuses', async () => {
    const url = new URL(serverUrl());
    const refused = await freePort();
    const twoHosts = `postgres://${url.username}${url.password ? `:${url.password}` : ''}@127.0.0.1:${refused},${url.hostname}:${url.port || 5432}${url.pathname}`;
    const sql = createSqlClient(twoHosts, { poolMax: 2 });
    try {
      const rows = await sql<{ one: number }[]>`select 1 as one`;
      expect(rows).toEqual([{ one: 1 }]);
    } finally {
      await sql.end({ timeout: 5 });
    }
  });
});
