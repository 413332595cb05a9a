import { createHash, createHmac } from 'node:crypto';

/** The spec's signature: hex HMAC-SHA-256 of the raw body bytes, keyed with the environment's secret. */
export function sign(body: Buffer, secret: string): string {
  return createHmac('sha256', secret).update(body).digest('hex');
}

/**
 * The ledger's event identity (team notes): sha256 of `topic \n entity_id \n event_time_sortable`
 * when the payload has an event_time, else sha256 of the raw body. The simulator always sends nine
 * fractional digits, so its event_time is already the sortable form.
 */
export function eventKey(topic: string, entityId: string, eventTime: string | null, body: Buffer): string {
  const hash = createHash('sha256');
  if (eventTime !== null) hash.update(`${topic}\n${entityId}\n${eventTime}`);
  else hash.update(body);
  return hash.digest('hex');
}
