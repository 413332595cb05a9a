import { createWriteStream } from 'node:fs';
import type { IncomingMessage } from 'node:http';

export class BodyTooLargeError extends Error {
  override readonly name = 'BodyTooLargeError';
}

/**
 * The body could not be written to its file (ENOSPC, EIO, EROFS, EDQUOT, …): this machine's fault,
 * not the client's, who sent it whole or is still sending. `code` is the system's error code.
 */
export class BodyNotSavedError extends Error {
  override readonly name = 'BodyNotSavedError';
  readonly code: string | undefined;
  constructor(readonly file: string, cause: Error) {
    super(`cannot write the upload to its temporary file: ${cause.message}`, { cause });
    this.code = (cause as NodeJS.ErrnoException).code;
  }
}

/**
 * Reads the raw request bytes, refusing (before buffering them) anything over `maxBytes`.
 * Plain 'data'/'end' listeners: the async iterator costs a promise per chunk on the hot path.
 */
export function readBody(req: IncomingMessage, maxBytes: number): Promise<Buffer> {
  // Not an async function: the webhook ack path reads every body here, and one promise is enough.
  const chunks: Buffer[] = [];
  return receive(req, maxBytes, (chunk) => void chunks.push(chunk)).then((size) => (chunks.length === 1 ? (chunks[0] as Buffer) : Buffer.concat(chunks, size)));
}

/**
 * Writes the raw request bytes to `file` (created new, readable by this user only), refusing
 * anything over `maxBytes` as readBody does; the request is paused while the disk catches up, so
 * an upload never sits in memory whole. Resolves with the size. A file that cannot be written
 * rejects with BodyNotSavedError once the body has been read (and dropped); a client that leaves
 * mid-body, with the request's own error. On a refusal the partial file is left for the caller, who
 * owns the folder it is in.
 */
export async function saveBody(req: IncomingMessage, maxBytes: number, file: string): Promise<number> {
  refuseDeclared(req, maxBytes);
  const out = createWriteStream(file, { flags: 'wx', mode: 0o600 });
  let failure: Error | undefined;
  out.on('error', (error) => {
    failure ??= error;
    req.resume(); // a paused request would wait forever for a 'drain' that cannot come
  });
  try {
    const size = await receive(req, maxBytes, (chunk) => {
      if (failure || out.write(chunk)) return;
      req.pause();
      out.once('drain', () => req.resume());
    });
    if (failure) throw new BodyNotSavedError(file, failure);
    await new Promise<void>((resolve, reject) => out.end((error?: Error | null) => (error ? reject(new BodyNotSavedError(file, error)) : resolve())));
    return size;
  } finally {
    if (!out.closed) out.destroy();
  }
}

function refuseDeclared(req: IncomingMessage, maxBytes: number): void {
  const declared = Number(req.headers['content-length']);
  if (Number.isFinite(declared) && declared > maxBytes) throw new BodyTooLargeError(`body of ${declared} bytes is over ${maxBytes}`);
}

/** Hands each chunk to `take` until the body ends; the one place the size limit is enforced. */
function receive(req: IncomingMessage, maxBytes: number, take: (chunk: Buffer) => void): Promise<number> {
  try {
    refuseDeclared(req, maxBytes);
  } catch (error) {
    return Promise.reject(error);
  }
  return new Promise((resolve, reject) => {
    let size = 0;
    const onData = (chunk: Buffer) => {
      size += chunk.length;
      if (size > maxBytes) {
        cleanup();
        req.resume(); // drain without keeping it so the 413 can be written
        reject(new BodyTooLargeError(`body is over ${maxBytes} bytes`));
        return;
      }
      take(chunk);
    };
    const onEnd = () => {
      cleanup();
      resolve(size);
    };
    const onError = (error: Error) => {
      cleanup();
      reject(error);
    };
    const cleanup = () => {
      req.off('data', onData);
      req.off('end', onEnd);
      req.off('error', onError);
      req.off('close', onClose);
    };
    // 'close' before 'end' means the client went away mid-body.
    const onClose = () => {
      if (!req.complete) onError(new Error('request aborted before its body was complete'));
    };
    req.on('data', onData);
    req.on('end', onEnd);
    req.on('error', onError);
    req.on('close', onClose);
  });
}
