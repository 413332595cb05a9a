import { createSqlClient, databaseOver } from '../db/database.js';
import { errorCode } from '../db/errors.js';
import { FileChangedError, fileSource, importStatementSource } from './import.js';
import { IMPORT_APPLICATION_NAME, type BackendMessage, type ChildReply, type ChildRequest, type GaveWayMessage, type LockWaitMessage, type PressureMessage } from './isolated-import.js';
import { RECEIVER_PACE } from './store-pipeline.js';
import { StatementFormatError } from './types.js';

/**
 * The statement inbox's import process (isolated-import.ts forks it with its own heap limit): one
 * file, over its own database connection, one answer on the IPC channel, then exit. A file that
 * exhausts this heap kills this process, never the daemon.
 */
let pressureMs = 0;
let gaveWayMs = 0;
let answered = false;
// The daemon gone without stopping this process (killed, out of memory, a crash: no shutdown ran to
// kill it) closes the IPC channel. Going on would import with nobody timing it or hearing the
// answer, holding the environment's import lock while a restarted daemon's imports wait on it.
// Exiting rolls the transaction back with the connection. Once answered, the channel closes because
// this process closes it.
process.on('disconnect', () => {
  if (!answered) process.exit(1);
});
process.once('message', (message: ChildRequest) => {
  process.on('message', (m: PressureMessage) => {
    pressureMs = m.pressureMs;
  });
  const database = databaseOver(createSqlClient(message.databaseUrl, { poolMax: 1, applicationName: IMPORT_APPLICATION_NAME }));
  // The answer goes as soon as the import has committed or rolled back, before the connection is
  // closed: closing may take seconds (a network that stalls after the commit; postgres.js waits up
  // to 5 s), and a time limit reached meanwhile moved a stored file to failed/ as "did not finish".
  // Once answered, the parent no longer stops this process (isolated-import.ts kill).
  void run(database, message).then(async (reply) => {
    answered = true;
    await new Promise<void>((sent) => process.send?.({ ...reply, peakRssMb: Math.round(process.resourceUsage().maxRSS / 1024) }, () => sent()) ?? sent());
    await database.close().catch(() => undefined);
    process.disconnect();
  });
});

async function run(database: ReturnType<typeof databaseOver>, request: ChildRequest): Promise<ChildReply> {
  try {
    // The one connection (poolMax 1) the import then runs on: its backend, told the parent.
    const [backend] = await database.sql<{ pid: number }[]>`select pg_backend_pid() as pid`;
    if (backend) process.send?.({ backendPid: backend.pid } satisfies BackendMessage);
    const result = await importStatementSource(database, request.environment, fileSource(request.file, { noFollow: true }), request.name, {
      maxFileBytes: request.maxFileBytes,
      maxAmountCents: BigInt(request.maxAmountCents),
      csv: request.csv,
      acceptUnbalanced: request.acceptUnbalanced,
      ...(request.maxMemoryMb !== undefined ? { readThreadMaxMemoryMb: request.maxMemoryMb } : {}),
      lockWait: (state) => process.send?.({ lockWait: state } satisfies LockWaitMessage),
      ...(request.yieldToReceiver ? { yieldTo: { pressureMs: () => pressureMs, pace: RECEIVER_PACE, gaveWay } } : {}),
    });
    return { ok: true, result };
  } catch (error) {
    const e = error as Error;
    return { ok: false, message: e.message ?? String(error), code: errorCode(error), changed: error instanceof FileChangedError, refused: error instanceof StatementFormatError };
  }
}

/** The time this import gave way to the receiver so far, told the parent: its time limit does not count it. */
function gaveWay(ms: number): void {
  gaveWayMs += ms;
  process.send?.({ gaveWayMs } satisfies GaveWayMessage);
}
