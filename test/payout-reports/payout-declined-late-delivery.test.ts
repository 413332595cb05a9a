import { describe, expect, it } from 'vitest';
import { createTestDatabase } from '../helpers/database.js';
import { factoringEvent, findings, invoiceEvent, pass, payoutEvent } from './fixtures.js';

const day = (d: number, time = '06:00:00') => `2026-03-${String(d).padStart(2, '0')}T${time}.000000000Z`;
const at = (d: number, time = '12:00:00') => new Date(`2026-03-${String(d).padStart(2, '0')}T${time}Z`);

describe('payout_pays_canceled_invoice and a payout webhook delivered late', () => {
  it('does not flag an invoice declined hours after the payout was made, because the payout webhook reached us later still', async () => {
    const d = await createTestDatabase('i2c_declined_late_delivery');
    await invoiceEvent(d, { ref: 'INV-71', eventTime: day(1) });
    await factoringEvent(d, { ref: 'INV-71', topic: 'factoring/approved', receivedAt: day(1, '07:00:00') });
    // The provider completed the payout at 06:00 (event_time); the decline reached us at 10:00, four
    // hours after it; the payout/complete delivery itself only at 18:00 (our outage, the provider's retries).
    await factoringEvent(d, { ref: 'INV-71', topic: 'factoring/declined', receivedAt: day(3, '10:00:00') });
    await payoutEvent(d, { sepa: 'PO2026030300000071', cents: 9_000n, eventTime: day(3), receivedAt: day(3, '18:00:00'), invoices: ['INV-71'] });
    await pass(d, at(4));
    // A decline after the payout is a near miss (docs/how-it-decides.md): nothing proves it came before.
    expect(await findings(d, 'payout_pays_canceled_invoice')).toEqual([]);
  });
});
