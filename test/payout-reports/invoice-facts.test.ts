import { randomUUID } from 'node:crypto';
import { beforeAll, describe, expect, it } from 'vitest';
import { createTestDatabase, type TestDatabase } from '../helpers/database.js';
import { factoringEvent, invoiceEvent, pass } from './fixtures.js';
import { invoiceFacts } from '../../src/ledger/invoices.js';
import { DAY, HOUR, MINUTE, realClock } from '../helpers/real-clock.js';

// Passes on the real clock (T0 = now), moved forward by minutes: an incremental pass recomputes the
// invoices with events received since the previous pass began (less the margin), as the receiver
// stamps them with the time they arrive.
const { at, iso } = realClock();

type Fact = { invoice_uuid: string; ref: string; order_uuid: string | null; created_at: string; canceled_at: string | null; gross_amount_cents: string | null };
const byUuid = (a: Fact, b: Fact) => a.invoice_uuid.localeCompare(b.invoice_uuid);
const plain = (rows: readonly Record<string, unknown>[]): Fact[] =>
  rows.map((r) => ({
    invoice_uuid: String(r.invoice_uuid), ref: String(r.ref), order_uuid: (r.order_uuid as string | null) ?? null,
    created_at: new Date(r.created_at as string).toISOString(), canceled_at: r.canceled_at ? new Date(r.canceled_at as string).toISOString() : null,
    gross_amount_cents: r.gross_amount_cents === null ? null : String(r.gross_amount_cents),
  })).sort(byUuid);

/** What the passes keep, and what the ledger's invoice events say now. */
async function keptAndDerived(d: TestDatabase) {
  const kept = await d.sql`select invoice_uuid, ref, order_uuid, created_at, canceled_at, gross_amount_cents from reconcile_invoice_facts where environment = 'sandbox'`;
  return { kept: plain(kept), derived: plain(await invoiceFacts(d.sql, 'sandbox')) };
}

/** The other two kept sets, against the ledger: each reference's latest factoring event, and every invoice reference. */
async function otherSets(d: TestDatabase) {
  const text = (rows: readonly Record<string, unknown>[]) => rows.map((r) => JSON.stringify(r)).sort();
  const factoring = {
    kept: text(await d.sql`select ref, topic, received_at::text, invoice_amount_cents::text from reconcile_factoring_latest where environment = 'sandbox'`),
    derived: text(await d.sql`
      select distinct on (invoice_external_reference_id) invoice_external_reference_id as ref, topic, received_at::text, invoice_amount_cents::text
      from factoring_events where environment = 'sandbox' and invoice_external_reference_id is not null
      order by invoice_external_reference_id, received_at desc, event_key desc`),
  };
  const refs = {
    kept: text(await d.sql`select ref from reconcile_invoice_refs where environment = 'sandbox'`),
    derived: text(await d.sql`select distinct external_reference_id as ref from invoice_events where environment = 'sandbox' and external_reference_id is not null`),
  };
  return { factoring, refs };
}

async function expectKeptAsDerived(d: TestDatabase) {
  const facts = await keptAndDerived(d);
  expect(facts.kept).toEqual(facts.derived);
  const { factoring, refs } = await otherSets(d);
  expect(factoring.kept).toEqual(factoring.derived);
  expect(refs.kept).toEqual(refs.derived);
  return facts;
}

describe('the invoice evidence the passes keep (reconcile_invoice_facts, reconcile_factoring_latest, reconcile_invoice_refs)', () => {
  let d: TestDatabase;
  const inv: Record<string, string> = {};
  beforeAll(async () => {
    d = await createTestDatabase('i2c_invoice_facts');
    inv.A = await invoiceEvent(d, { ref: 'INV-A', order: randomUUID(), eventTime: iso(-10 * DAY) });
    inv.B = await invoiceEvent(d, { ref: 'INV-B', eventTime: iso(-9 * DAY) });
    await factoringEvent(d, { ref: 'INV-A', receivedAt: iso(-9 * DAY) });
  });

  it('are what the invoice and factoring events say after every pass: full, incremental with new events of old and new invoices, and rebuilt when missing', async () => {
    expect(await pass(d, at(0))).toMatchObject({ mode: 'full', invoices: { judged: true } });
    let facts = await expectKeptAsDerived(d);
    expect(facts.kept.map((f) => f.ref).sort()).toEqual(['INV-A', 'INV-B']);

    // A is canceled, B completed with its gross amount, and a later event of A names another
    // reference (the first to arrive stays A's); C is new.
    await invoiceEvent(d, { uuid: inv.A, ref: 'INV-A', topic: 'invoice/canceled', eventTime: iso(MINUTE), receivedAt: iso(MINUTE) });
    await invoiceEvent(d, { uuid: inv.A, ref: 'INV-A-LATER', topic: 'invoice/reopened', eventTime: iso(MINUTE + 1), receivedAt: iso(MINUTE) });
    await invoiceEvent(d, { uuid: inv.B, ref: 'INV-B', topic: 'invoice/complete', eventTime: iso(MINUTE), receivedAt: iso(MINUTE), grossCents: 11_900n });
    inv.C = await invoiceEvent(d, { ref: 'INV-C', eventTime: iso(MINUTE), receivedAt: iso(MINUTE) });
    // A's factoring is declined after its approval; B is factored.
    await factoringEvent(d, { ref: 'INV-A', topic: 'factoring/declined', receivedAt: iso(MINUTE) });
    await factoringEvent(d, { ref: 'INV-B', cents: 11_900n, receivedAt: iso(MINUTE) });
    expect(await pass(d, at(2 * MINUTE))).toMatchObject({ mode: 'incremental', invoices: { judged: true } });
    facts = await expectKeptAsDerived(d);
    expect((await otherSets(d)).factoring.kept.map((r) => JSON.parse(r).topic)).toEqual(['factoring/declined', 'factoring/approved']);
    expect((await otherSets(d)).refs.kept).toHaveLength(4);
    const a = facts.kept.find((f) => f.invoice_uuid === inv.A)!;
    expect([a.ref, a.canceled_at !== null]).toEqual(['INV-A', true]);
    expect(facts.kept.find((f) => f.invoice_uuid === inv.B)!.gross_amount_cents).toBe('11900');
    expect(facts.kept.map((f) => f.ref).sort()).toEqual(['INV-A', 'INV-B', 'INV-C']);

    // A full pass judges as the incremental one did: nothing opens, reopens or resolves. It also
    // puts right what differs from the events: a wrong row, and one of an invoice with none.
    await d.sql`update reconcile_invoice_facts set ref = 'WRONG' where invoice_uuid = ${inv.A!}`;
    await d.sql`insert into reconcile_invoice_facts (environment, invoice_uuid, ref, created_at) values ('sandbox', ${randomUUID()}, 'INV-GONE', now())`;
    await d.sql`update reconcile_factoring_latest set topic = 'factoring/pending' where ref = 'INV-B'`;
    await d.sql`insert into reconcile_invoice_refs (environment, ref) values ('sandbox', 'INV-GONE')`;
    expect(await pass(d, at(2 * HOUR), { full: true })).toMatchObject({ mode: 'full', opened: 0, reopened: 0, resolved: 0 });
    facts = await expectKeptAsDerived(d);

    // Lost (here: deleted), the table is rebuilt whole by the next pass that judges the invoices,
    // not only for the invoices with new events (D's; the others' are older than that pass's margin).
    await d.sql`delete from reconcile_invoice_facts`;
    await d.sql`delete from reconcile_factoring_latest`;
    await d.sql`delete from reconcile_invoice_refs`;
    inv.D = await invoiceEvent(d, { ref: 'INV-D', eventTime: iso(2 * HOUR + MINUTE), receivedAt: iso(2 * HOUR + MINUTE) });
    expect(await pass(d, at(2 * HOUR + 2 * MINUTE))).toMatchObject({ mode: 'incremental', invoices: { judged: true } });
    facts = await expectKeptAsDerived(d);
    expect(facts.kept.map((f) => f.ref).sort()).toEqual(['INV-A', 'INV-B', 'INV-C', 'INV-D']);
    expect((await otherSets(d)).factoring.kept).toHaveLength(2);
  });
});
