import { randomUUID } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { fetchAll } from '../../src/reports/source.js';
import { invoicesSource } from '../../src/reports/invoices.js';
import { createTestDatabase } from '../helpers/database.js';
import { factoringEvent, findings, invoiceEvent, pass, payoutEvent } from '../payout-reports/fixtures.js';

const day = (d: number, time = '06:00:00') => `2026-03-${String(d).padStart(2, '0')}T${time}.000000000Z`;
const at = (d: number, time = '12:00:00') => new Date(`2026-03-${String(d).padStart(2, '0')}T${time}Z`);

// docs/reports.md: "the payout is the first completed payout listing the invoice (`payouts` counts them)";
// src/reports/invoices.ts: "`payouts` counts them (2 or more: invoice_paid_out_twice)".
// The payout's external_reference_ids is "sent as a string" (provider-api.md) and may repeat a reference.

describe('report invoices: payouts', () => {
  it('counts one payout once when its list names the invoice twice', async () => {
    const d = await createTestDatabase('inv_report_payouts');
    await invoiceEvent(d, { ref: 'INV-1', order: randomUUID(), eventTime: day(1) });
    await factoringEvent(d, { ref: 'INV-1', receivedAt: day(1) });
    // one payout, one transfer: "INV-1, INV-1" as the provider sent it
    const payout = await payoutEvent(d, { sepa: 'PO2026030200000031', cents: 9_667n, eventTime: day(2), invoices: ['INV-1', 'INV-1'] });
    await pass(d, at(4));
    expect(await findings(d, 'invoice_paid_out_twice')).toEqual([]);
    const [row] = (await fetchAll(invoicesSource(d, { environment: 'sandbox' }), undefined, 100)) ?? [];
    expect({ payout_uuid: row?.payout_uuid, payouts: row?.payouts }).toEqual({ payout_uuid: payout, payouts: '1' });
    await d.drop();
  });
});
