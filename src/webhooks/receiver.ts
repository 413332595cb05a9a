import { randomUUID } from 'node:crypto';
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { ProviderEnvironment } from '../config/schema.js';
import { sendJson } from '../http/server.js';
import type { Logger } from '../log/logger.js';
import { rateLimitedLog } from '../log/rate-limited.js';
import { classifyDelivery } from './classify.js';
import { AckDeadlineError, LedgerUnavailableError, type GroupCommitWriter } from './group-commit.js';
import type { WebhookMetrics, WebhookOutcome } from './metrics.js';
import { BodyTooLargeError, readBody } from '../http/read-body.js';
import type { SecretSource } from './secrets.js';
import { verifySignature } from './signature.js';
import type { AddressMatcher } from '../config/addresses.js';
import { clientAddress } from './source-address.js';
import { familyOf } from '../provider/vocabulary.js';
import { errorCode, unavailableCause } from '../db/errors.js';

export interface ReceiverOptions {
  environment: ProviderEnvironment;
  signatureHeader: string;
  maxBodyBytes: number;
  /**
   * Milliseconds from the request's start within which it is answered: 2xx after its commit, or
   * 503 when the commit has not happened by then (the provider gives up after 5 s and retries).
   */
  ackDeadlineMs: number;
  allowedSources: AddressMatcher | undefined;
  trustedProxies: AddressMatcher;
  secrets: SecretSource;
  writer: GroupCommitWriter;
  metrics: WebhookMetrics;
  log: Logger;
  /** True once shutdown began: answer 503 so the provider retries against a live replica. */
  isClosing: () => boolean;
}

// Headers never stored: they carry credentials of some other hop.
const UNSTORED_HEADERS = new Set(['authorization', 'cookie', 'api-token', 'proxy-authorization']);

/**
 * Header values go into a jsonb column as they are: Node's parser answers 400 to a NUL in a header
 * before we see it, and decodes the rest as latin1, so no value holds what jsonb refuses
 * (storable.ts); checked with Node 20.20 over a raw socket.
 */
function storedHeaders(req: IncomingMessage): Record<string, string> {
  const kept: Record<string, string> = {};
  for (const [name, value] of Object.entries(req.headers)) {
    if (value === undefined || UNSTORED_HEADERS.has(name)) continue;
    kept[name] = Array.isArray(value) ? value.join(', ') : value;
  }
  return kept;
}

/**
 * POST /webhooks. Checks run cheapest first (source address, size, signature, JSON) and every
 * refusal is logged and counted. A 2xx is written only after the delivery's transaction committed.
 */
export function createWebhookHandler(options: ReceiverOptions): (req: IncomingMessage, res: ServerResponse) => Promise<void> {
  const { log, metrics } = options;

  // One line per answer with the delivery's correlation id (its delivery_uuid in the ledger when
  // stored, and the X-Request-Id header of the answer): refusals at info, successes at debug, so a
  // busy receiver does not write a line per delivery; the success line's object is built only when
  // debug is on, as this runs on every acknowledgement.
  const debugOn = log.isLevelEnabled('debug');
  const finish = (res: ServerResponse, started: bigint, id: string, outcome: WebhookOutcome, parseStatus: string, status: number, body: Record<string, unknown>, close = false, unsigned = false) => {
    const seconds = Number(process.hrtime.bigint() - started) / 1e9;
    metrics.deliveries.labels(outcome, parseStatus).inc();
    metrics.ackSeconds.labels(outcome).observe(seconds);
    // A refusal before the signature was checked has its own rate-limited line (anyone can cause
    // one): none per answer.
    const logged = !unsigned;
    if (logged && status >= 400) log.info({ delivery: id, outcome, status, ms: Math.round(seconds * 1e4) / 10 }, 'webhook answered');
    else if (logged && debugOn) log.debug({ delivery: id, outcome, status, ms: Math.round(seconds * 1e4) / 10 }, 'webhook answered');
    res.setHeader('x-request-id', id);
    sendJson(res, status, body, close);
  };

  // Anyone who reaches the port can send unsigned bodies: one line a minute (with how many were
  // held back); bnpl_recon_webhook_deliveries_total{outcome="bad_signature"} counts every one.
  const badSignature = rateLimitedLog(log, 'warn', 'webhook refused: bad or missing signature');
  // So can a sender outside WEBHOOK_ALLOWED_IPS, an oversized body, or one cut short: the same
  // limit, each its own line a minute (its outcome counted every time).
  const forbiddenSource = rateLimitedLog(log, 'warn', 'webhook refused: source address not allowed');
  const tooLarge = rateLimitedLog(log, 'warn', 'webhook refused: body too large');
  const unreadable = rateLimitedLog(log, 'warn', 'webhook body could not be read');
  const encoded = rateLimitedLog(log, 'warn', 'webhook refused: the body has a content encoding (send it uncompressed)');

  const verify = async (rawBody: Buffer, header: string | undefined) => {
    let check = verifySignature(rawBody, header, options.secrets.current());
    if (!check.valid && (await options.secrets.refreshAfterFailure())) check = verifySignature(rawBody, header, options.secrets.current());
    return check;
  };

  return async (req, res) => {
    const started = process.hrtime.bigint();
    const receivedAt = new Date();
    const id = randomUUID();
    const source = clientAddress(req.socket.remoteAddress, req.headers['x-forwarded-for'] as string | undefined, options.trustedProxies);
    if (options.isClosing()) return finish(res, started, id, 'ledger_unavailable', 'none', 503, { error: 'shutting down; retry' }, true);
    if (options.allowedSources && (source === undefined || !options.allowedSources.has(source))) {
      forbiddenSource({ delivery: id, source });
      return finish(res, started, id, 'forbidden_source', 'none', 403, { error: 'source address not allowed' }, true, true);
    }

    // The signature is the digest of the JSON body as sent (provider-api.md), which the provider
    // sends uncompressed: a compressed one would be refused later as "not JSON", naming the wrong
    // problem. 415 names its coding, and the provider's retries can be redirected.
    const coding = req.headers['content-encoding']?.trim().toLowerCase();
    if (coding && coding !== 'identity') {
      req.resume();
      encoded({ delivery: id, source, encoding: coding.slice(0, 40) });
      return finish(res, started, id, 'unsupported_encoding', 'none', 415, { error: `unsupported Content-Encoding ${coding.slice(0, 40)}: send the JSON body uncompressed` }, true, true);
    }

    let rawBody: Buffer;
    try {
      rawBody = await readBody(req, options.maxBodyBytes);
    } catch (error) {
      if (error instanceof BodyTooLargeError) {
        tooLarge({ delivery: id, source, err: error.message });
        return finish(res, started, id, 'too_large', 'none', 413, { error: error.message }, true, true);
      }
      unreadable({ delivery: id, source, err: (error as Error).message });
      return finish(res, started, id, 'error', 'none', 400, { error: 'body could not be read' }, true, true);
    }

    if (options.secrets.current().length === 0 && !(await options.secrets.refreshAfterFailure()) && options.secrets.current().length === 0) {
      log.error({ delivery: id }, 'webhook refused: no signing secret available yet (GET /webhooks/keys failed)');
      return finish(res, started, id, 'no_secret', 'none', 503, { error: 'signing secret unavailable; retry' });
    }
    const header = req.headers[options.signatureHeader];
    const check = await verify(rawBody, Array.isArray(header) ? header[0] : header);
    if (!check.valid) {
      badSignature({ delivery: id, source, header: options.signatureHeader, present: header !== undefined, bytes: rawBody.length });
      return finish(res, started, id, 'bad_signature', 'none', 401, { error: 'bad or missing signature' }, false, true);
    }

    const classification = classifyDelivery(rawBody);
    if (!classification.ok) {
      log.warn({ delivery: id, source, err: classification.error }, 'webhook refused: body is not JSON');
      return finish(res, started, id, 'invalid_json', 'none', 400, { error: `body is not JSON: ${classification.error}` });
    }
    if (classification.status !== 'parsed') {
      log.warn({ delivery: id, topic: classification.topic, status: classification.status, reason: classification.reason, err: classification.error }, 'webhook stored unparsed');
    }

    try {
      const elapsedMs = Number(process.hrtime.bigint() - started) / 1e6;
      const result = await options.writer.write({
        deliveryUuid: id,
        environment: options.environment,
        receivedAt,
        sourceIp: source ?? null,
        headers: storedHeaders(req),
        rawBody,
        keyFingerprint: check.keyFingerprint ?? null,
        classification,
      }, options.ackDeadlineMs - elapsedMs);
      const outcome: WebhookOutcome = result.duplicate ? 'duplicate' : 'stored';
      const stored = result.classification;
      if (stored.status !== 'parsed') {
        metrics.unparsed.labels((stored.topic !== null && familyOf(stored.topic)) || 'unknown', stored.reason).inc();
      }
      log.debug({ delivery: id, deliveryId: result.deliveryId, topic: stored.topic, duplicate: result.duplicate }, 'webhook stored');
      finish(res, started, id, outcome, stored.status, 200, {
        status: 'stored',
        delivery_id: result.deliveryId,
        duplicate: result.duplicate,
        parse_status: stored.status,
      });
    } catch (error) {
      if (error instanceof AckDeadlineError) {
        log.error({ delivery: id, deadlineMs: options.ackDeadlineMs, mayCommit: error.mayCommit }, 'webhook answered 503: no commit within the ack deadline');
        return finish(res, started, id, 'ack_deadline', 'none', 503, { error: 'ledger too slow; retry' });
      }
      if (error instanceof LedgerUnavailableError) {
        log.error({ delivery: id, cause: unavailableCause(error.cause), code: errorCode(error.cause), err: (error.cause as Error | undefined)?.message }, 'webhook not stored: ledger unavailable');
        return finish(res, started, id, 'ledger_unavailable', 'none', 503, { error: 'ledger unavailable; retry' });
      }
      log.error({ delivery: id, err: error }, 'webhook not stored');
      finish(res, started, id, 'error', 'none', 500, { error: 'delivery not stored; retry' });
    }
  };
}
