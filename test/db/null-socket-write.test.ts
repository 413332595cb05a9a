import { spawnSync } from 'node:child_process';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { isNullSocketWrite } from '../../src/db/null-socket-write.js';
import { useTestDatabase, type TestDatabase } from '../helpers/database.js';

/**
 * surviveNullSocketWrite (src/db/null-socket-write.ts): postgres.js 3.4.9's write to a closed
 * connection from a timer no longer ends a process that installed it, and nothing else is
 * swallowed. In children, because without it the defect ends the process it happens in.
 */
const REPO_ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
const child = (mode: 'begin' | 'other', url: string) =>
  spawnSync(process.execPath, ['--import', 'tsx', 'test/db/null-socket-write-child.ts', url, mode], { cwd: REPO_ROOT, encoding: 'utf8', timeout: 60_000 });

let db: TestDatabase;
useTestDatabase('null_socket_write', (d) => (db = d), { migrate: false });

describe('a write of postgres.js to a closed connection', () => {
  it('is answered by the handler (new connections) and the process lives on; the pool answers after', { timeout: 90_000 }, () => {
    const run = child('begin', db.url);
    expect(run.stderr).toBe('');
    expect(run.status).toBe(0);
    const { defects, rejected, after } = JSON.parse(run.stdout) as { defects: string[]; rejected: string[]; after: (number | string)[][] };
    // Each of the three ROLLBACKs went to a closed connection (test/db/transaction.test.ts: without the handler, the first ends the process).
    expect(defects).toEqual(Array(3).fill("Cannot read properties of null (reading 'write')"));
    expect(rejected).toEqual(['CONNECTION_CLOSED', 'CONNECTION_CLOSED', 'CONNECTION_CLOSED']);
    expect(after).toEqual([[1, 2], [1, 2], [1, 2]]);
  });

  it('leaves every other uncaught exception ending the process, on stderr with status 1', { timeout: 90_000 }, () => {
    const run = child('other', db.url);
    expect(run.status).toBe(1);
    expect(run.stdout).toBe('');
    expect(run.stderr).toContain('Error: not a postgres.js defect');
  });

  it('is told by the TypeError\'s message and its first frame in postgres.js\'s connection.js', () => {
    const typeError = (stack: string) => Object.assign(new TypeError("Cannot read properties of null (reading 'write')"), { stack });
    const head = "TypeError: Cannot read properties of null (reading 'write')";
    expect(isNullSocketWrite(typeError(`${head}\n    at Immediate.nextWrite (file:///srv/app/node_modules/postgres/src/connection.js:255:22)\n    at process.processImmediate (node:internal/timers:483:21)`))).toBe(true);
    expect(isNullSocketWrite(typeError(`${head}\n    at nextWrite (C:\\app\\node_modules\\postgres\\cjs\\src\\connection.js:250:22)`))).toBe(true);
    expect(isNullSocketWrite(typeError(`${head}\n    at Immediate.nextWrite (/home/a user/app/node_modules/postgres/src/connection.js:255:22)`))).toBe(true);
    // The same message from our own code, or from elsewhere in the driver: not this defect.
    expect(isNullSocketWrite(typeError(`${head}\n    at writeReport (file:///srv/app/dist/reports/stream.js:10:3)\n    at Immediate.nextWrite (file:///srv/app/node_modules/postgres/src/connection.js:255:22)`))).toBe(false);
    expect(isNullSocketWrite(typeError(`${head}\n    at Socket.data (file:///srv/app/node_modules/postgres/src/connection.js:320:9)`))).toBe(false);
    expect(isNullSocketWrite(new Error("Cannot read properties of null (reading 'write')"))).toBe(false);
    expect(isNullSocketWrite('a string')).toBe(false);
  });
});
