import { randomUUID } from 'node:crypto';
import { classifyDelivery, type StorableClassification } from '../../src/webhooks/classify.js';
import type { DeliveryRecord } from '../../src/webhooks/ledger-write.js';

/**
 * An invoice/created delivery of event `invoice` received at `at`, with `extra` bytes in its raw
 * body (after the JSON, so it still classifies): the month of `at` decides its partition.
 */
export function invoiceDelivery(invoice: string, at: string, extra = ''): DeliveryRecord {
  const body = Buffer.concat([
    Buffer.from(`{"topic":"invoice/created","invoice_uuid":"${invoice}","external_reference_id":"INV","event_time":"2031-01-01T00:00:00Z"}`),
    Buffer.from(extra, 'latin1'),
  ]);
  const classification = classifyDelivery(body.subarray(0, body.length - extra.length));
  if (!classification.ok) throw new Error('fixture does not classify');
  return {
    deliveryUuid: randomUUID(), environment: 'sandbox', receivedAt: new Date(at), sourceIp: '127.0.0.1',
    headers: { 'content-type': 'application/json', 'x-odd': 'tab\there, "quoted" \\ back' }, rawBody: body, keyFingerprint: 'abc',
    classification: classification as StorableClassification,
  };
}
