import { Writable } from 'node:stream';
import { pino } from 'pino';
import { request } from 'undici';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';

/**
 * The temporary folder an upload is written to fills up (ENOSPC; the pod's /tmp emptyDir, the node's
 * disk) or refuses writes (EIO, EROFS). That is the daemon's fault, not the client's: 503 naming the
 * error and an error logged, not the connection dropped as if the client had left.
 */
vi.mock('node:fs', async (importOriginal) => {
  const original = await importOriginal<typeof import('node:fs')>();
  const createWriteStream = ((file: string, options: unknown) => {
    if (String(file).includes('bnpl-recon-upload-')) {
      return new Writable({
        write(_chunk, _encoding, callback) {
          callback(Object.assign(new Error('ENOSPC: no space left on device, write'), { code: 'ENOSPC', errno: -28, syscall: 'write' }));
        },
      });
    }
    return original.createWriteStream(file as never, options as never);
  }) as typeof original.createWriteStream;
  return { ...original, default: { ...original, createWriteStream }, createWriteStream };
});

const { loadConfig } = await import('../../src/config/load.js');
const { operatorRoutes } = await import('../../src/http/operator-api.js');
const { startHttpServer } = await import('../../src/http/server.js');
const { createTestDatabase } = await import('../helpers/database.js');

const ALICE = 'alice-2e9a6b8f9ae100b959a57a8973c90c31';
let server: Awaited<ReturnType<typeof startHttpServer>>;
const logLines: { level: number; msg: string }[] = [];

beforeAll(async () => {
  const database = await createTestDatabase('zz_sec_disk_full');
  const log = pino({ level: 'debug' }, { write: (s: string) => void logLines.push(JSON.parse(s) as (typeof logLines)[number]) });
  server = await startHttpServer({
    host: '127.0.0.1', port: 0, log, name: 'test',
    routes: operatorRoutes({ config: loadConfig({ DATABASE_URL: database.url, OPERATOR_TOKENS: `alice:${ALICE}`, PROVIDER_ENV: 'sandbox' }), database, log }),
  });
});
afterAll(async () => {
  await server?.close();
});

describe('an upload whose temporary file cannot be written', () => {
  it('answers 503 naming the disk error and logs an error, instead of dropping the connection', async () => {
    let outcome: string;
    try {
      const response = await request(`${server.url}/api/statements?name=s.sta`, {
        method: 'POST', headers: { authorization: `Bearer ${ALICE}`, 'content-type': 'application/octet-stream' }, body: Buffer.alloc(64 * 1024, 'x'),
      });
      outcome = `${response.statusCode} ${await response.body.text()}`;
    } catch (error) {
      outcome = `no answer: ${(error as Error).message}`;
    }
    expect(outcome).toMatch(/^503 .*ENOSPC.*nothing was imported/);
    expect(logLines.filter((l) => l.level >= 50 /* error */).map((l) => l.msg), 'no error logged for a disk that refused the upload').toEqual([
      expect.stringContaining('temporary file cannot be written (ENOSPC)'),
    ]);
  });
});
