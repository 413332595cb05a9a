import { connect, type Socket } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestDatabase, type TestDatabase } from '../helpers/database.js';
import { startTestReceiver, type TestReceiver } from '../helpers/receiver.js';

/**
 * Slow clients over raw sockets against the real receiver: a slowloris trickling header lines and
 * a client trickling its body are cut off at SERVER_HEADERS_TIMEOUT_MS and SERVER_REQUEST_TIMEOUT_MS.
 */
const HEADERS_MS = 1000;
const REQUEST_MS = 2000;
// node:http checks every quarter of the headers timeout (server.ts), plus scheduling slack.
const MARGIN_MS = 700;

let database: TestDatabase;
let receiver: TestReceiver;

beforeAll(async () => {
  database = await createTestDatabase('slow_clients');
  receiver = await startTestReceiver(database, { SERVER_HEADERS_TIMEOUT_MS: String(HEADERS_MS), SERVER_REQUEST_TIMEOUT_MS: String(REQUEST_MS) });
});
afterAll(async () => {
  await receiver?.close();
});

interface Cut {
  ms: number;
  answer: string;
}

/** Connects, sends `head`, then one `drip` every 100 ms until the server closes the connection. */
function trickle(head: string, drip: string): Promise<Cut> {
  return new Promise((resolve, reject) => {
    const socket: Socket = connect(receiver.http.port, '127.0.0.1');
    let answer = '';
    let started = 0;
    let timer: NodeJS.Timeout | undefined;
    const giveUp = setTimeout(() => {
      socket.destroy();
      reject(new Error(`still connected after 15 s; got ${JSON.stringify(answer)}`));
    }, 15_000);
    socket.on('connect', () => {
      started = performance.now();
      socket.write(head);
      timer = setInterval(() => {
        if (socket.writable) socket.write(drip);
      }, 100);
    });
    socket.on('data', (chunk) => (answer += chunk.toString('latin1')));
    socket.on('error', () => {});
    socket.on('close', () => {
      clearInterval(timer);
      clearTimeout(giveUp);
      resolve({ ms: performance.now() - started, answer });
    });
  });
}

describe('slow clients', () => {
  it('cuts off a client trickling header lines at the headers timeout', async () => {
    const cut = await trickle('POST /webhooks HTTP/1.1\r\nhost: 127.0.0.1\r\n', 'x-slow: 1\r\n');
    expect(cut.ms).toBeGreaterThanOrEqual(HEADERS_MS - 50);
    expect(cut.ms).toBeLessThan(HEADERS_MS + MARGIN_MS);
    expect(cut.answer).toMatch(/^HTTP\/1\.1 408/);
  });

  it('cuts off a client trickling its body at the request timeout', async () => {
    const head = 'POST /webhooks HTTP/1.1\r\nhost: 127.0.0.1\r\ncontent-type: application/json\r\ncontent-length: 100000\r\n\r\n{';
    const cut = await trickle(head, ' ');
    expect(cut.ms).toBeGreaterThanOrEqual(REQUEST_MS - 50);
    expect(cut.ms).toBeLessThan(REQUEST_MS + MARGIN_MS);
    expect(cut.answer).not.toMatch(/^HTTP\/1\.1 2/);
    console.info(`slow body cut after ${cut.ms.toFixed(0)} ms (SERVER_REQUEST_TIMEOUT_MS=${REQUEST_MS}), answer ${JSON.stringify(cut.answer.split('\r\n')[0])}`);
  });

  it('still serves a prompt client', async () => {
    const cut = await trickle('GET /webhooks HTTP/1.1\r\nhost: 127.0.0.1\r\nconnection: close\r\n\r\n', '');
    expect(cut.answer).toMatch(/^HTTP\/1\.1 405/);
    expect(cut.ms).toBeLessThan(HEADERS_MS);
  });
});
