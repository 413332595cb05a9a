import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { request } from 'undici';
import type { Simulator } from '../../sim/simulator.js';
import type { Env } from '../../sim/options.js';

export interface Received {
  body: Buffer;
  headers: IncomingMessage['headers'];
}

/** A loopback receiver; `answer` picks the status per delivery (200 by default). */
export async function startReceiver(answer: (r: Received, index: number) => number = () => 200) {
  const received: Received[] = [];
  const server = createServer((req: IncomingMessage, res: ServerResponse) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const r = { body: Buffer.concat(chunks), headers: req.headers };
      received.push(r);
      res.writeHead(answer(r, received.length - 1));
      res.end();
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', () => resolve()));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}/webhooks`,
    received,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

export async function getJson(sim: Simulator, path: string, env: Env = 'sandbox'): Promise<{ status: number; body: any; headers: Record<string, unknown> }> {
  const res = await request(`${sim.url}${path}`, { headers: { 'api-token': sim.apiKeys[env] } });
  return { status: res.statusCode, body: await res.body.json(), headers: res.headers };
}

/** Every order the API lists, page by page until a short page. */
export async function listAllOrders(sim: Simulator, env: Env, perPage = 100): Promise<{ uuid: string; state: string; external_reference_id: string }[]> {
  const out = [];
  for (let page = 1; page < 10_000; page++) {
    const { body } = await getJson(sim, `/api/v1/orders?page=${page}&per_page=${perPage}`, env);
    out.push(...body.orders);
    if (body.orders.length < perPage) break;
  }
  return out;
}

export const ALL_BARE_TOPICS = ['order', 'invoice', 'payout', 'buyer', 'factoring', 'kyc', 'applicant', 'billing_configuration'];
