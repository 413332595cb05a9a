import type { Config } from '../config/schema.js';
import type { Database } from '../db/database.js';
import type { Logger } from '../log/logger.js';
import { acknowledgeDiscrepancy } from '../reconcile/ack.js';
import { readBody, BodyTooLargeError } from './read-body.js';
import { RequestRefused, type Guard, type Operator } from './operator-request.js';
import { UsageError } from '../config/usage-error.js';
import { sendJson, type Route } from './server.js';
import { isStorableText, UNSTORABLE_TEXT } from '../db/text.js';

const UTF8 = new TextDecoder('utf-8', { fatal: true });

const MAX_NOTE = 4000;
/** The body: a 4,000-character note and a name, JSON-escaped, fit with room to spare. */
const MAX_BODY_BYTES = 64 * 1024;
const MAX_ACTOR = 64;
// Control and invisible formatting characters (bidi overrides, zero-width) and markup: a name
// that renders differently from what is stored, or that a careless viewer would interpret.
const UNSAFE_ACTOR = /[\p{Cc}\p{Cf}<>&"'`\\]/u;

/**
 * Who an acknowledgement is recorded as. A named token is the person (a name in the body is
 * ignored). The shared token cannot tell people apart, so a name it sends is recorded as claimed,
 * `api (self-asserted: NAME)`, which no named token's identity can equal (names are letters,
 * digits, `.`, `_`, `-`, and `api` is reserved): holding the shared token never writes history in
 * a named operator's name.
 */
export function ackActor(who: Operator, claimed: string | undefined): string {
  if (!who.shared || claimed === undefined) return who.name;
  return `${who.name} (self-asserted: ${claimed})`;
}

/** The body's `note` and `actor`, or the 400 message naming the field at fault. */
export function parseAckBody(parsed: { note?: unknown; actor?: unknown }): { note: string; actor: string | undefined } | { error: string } {
  const note = parsed?.note;
  if (typeof note !== 'string' || note.trim() === '') return { error: 'note is required' };
  if (note.length > MAX_NOTE) return { error: 'note must be at most 4,000 characters' };
  // Refused here rather than failing the statement (a 500) or being stored other than answered.
  if (!isStorableText(note)) return { error: `note must not contain ${UNSTORABLE_TEXT}` };
  if (parsed.actor === undefined || parsed.actor === null) return { note, actor: undefined };
  if (typeof parsed.actor !== 'string') return { error: 'actor must be a string' };
  const actor = parsed.actor.trim();
  if (actor === '') return { note, actor: undefined };
  if (actor.length > MAX_ACTOR) return { error: `actor must be at most ${MAX_ACTOR} characters` };
  if (!isStorableText(actor)) return { error: `actor must not contain ${UNSTORABLE_TEXT}` };
  if (UNSAFE_ACTOR.test(actor)) return { error: 'actor must not contain control characters, invisible formatting or markup (< > & quotes backslash)' };
  return { note, actor };
}

export function ackRoutes(deps: { config: Config; database: Database; log: Logger; guarded: Guard }): Route[] {
  const { config, database, log, guarded } = deps;
  return [
    {
      method: 'POST',
      path: /^\/api\/discrepancies\/[^/]+\/ack$/,
      handler: guarded({
        // A path not naming a number names no discrepancy: NaN, which acknowledgeDiscrepancy answers
        // not_found (404) without reading the ledger, once the body has been checked.
        parse: (url) => {
          const idText = url.pathname.split('/')[3] ?? '';
          return { idText, id: /^[0-9]{1,15}$/.test(idText) ? Number(idText) : NaN };
        },
        handle: async (req, res, { idText, id }, who) => {
          // Refusals are thrown: guarded answers them and writes the log line naming the reason. The
          // body is read and checked before the ledger is reached (acknowledgeDiscrepancy's own
          // transaction), so a bad one is 400 whatever the ledger's state.
          let parsed: { note?: unknown; actor?: unknown };
          let text: string;
          try {
            // Fatal: a byte that is not UTF-8 (a client sending Windows-1252) is refused, not stored as U+FFFD in the note.
            text = UTF8.decode(await readBody(req, MAX_BODY_BYTES));
          } catch (error) {
            if (error instanceof BodyTooLargeError) throw new RequestRefused(413, `body is larger than ${MAX_BODY_BYTES} bytes (64 KiB): a note is at most 4,000 characters`);
            throw new UsageError('body must be JSON in UTF-8: {"note": "..."}; it holds bytes that are not UTF-8');
          }
          try {
            parsed = JSON.parse(text) as typeof parsed;
          } catch {
            throw new UsageError('body must be JSON: {"note": "..."}');
          }
          const body = parseAckBody(parsed);
          if ('error' in body) throw new UsageError(body.error);
          const result = await acknowledgeDiscrepancy(database, id, body.note, ackActor(who, body.actor), config.PROVIDER_ENV);
          if (result.outcome === 'not_found') throw new RequestRefused(404, `no discrepancy ${idText} in ${config.PROVIDER_ENV}`);
          if (result.outcome === 'resolved') throw new RequestRefused(409, `discrepancy ${id} is already resolved`);
          log.info({ id, actor: result.discrepancy.acknowledgedBy }, 'discrepancy acknowledged');
          sendJson(res, 200, result.discrepancy);
          // Its own transaction (reconcile/ack.ts): answered 503 at the deadline, not cancelled, and
          // may still be recorded (http-api.md), so sending it again is safe.
        },
      }, { ledger: 'own' }),
    },
  ];
}
