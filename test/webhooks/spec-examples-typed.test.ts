import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestDatabase, type TestDatabase } from '../helpers/database.js';
import { postDelivery, startTestReceiver, type TestReceiver } from '../helpers/receiver.js';

/**
 * Review (spec conformance): bodies written from shared/provider-api.md ("Payload shapes", "Delivery
 * rules"), not from the repo's fixtures, posted signed (hex HMAC-SHA-256 of the raw body in
 * x-service-signature) to the real receiver, and read back from the typed tables.
 */
let database: TestDatabase;
let receiver: TestReceiver;

beforeAll(async () => {
  database = await createTestDatabase('spec_examples_typed');
  receiver = await startTestReceiver(database);
});
afterAll(async () => {
  await receiver?.close();
});

const ORDER = '7c9e6679-7425-40de-944b-e07fc1f90ae7';
const BUYER = '1b9d6bcd-bbfd-4b2d-9b5d-ab8dfbbd4bed';
const INVOICE = '6ec0bd7f-11c0-43da-975e-2a8ad9ebae0b';
const PAYOUT = 'a8098c1a-f86e-11da-bd1a-00112444be1e';
const FACTORING = '16fd2706-8baf-433b-82eb-8c7fada847da';
const BILLING = '886313e1-3b8a-5372-9b90-0c9aee199e5d';
const APPLICANT = '0f8fad5b-d9cb-469f-a165-70867728950e';

async function post(body: string) {
  const r = await postDelivery(receiver.url, body);
  expect(r.status, body).toBe(200);
  expect(r.body.parse_status, `${body} -> ${JSON.stringify(r.body)}`).toBe('parsed');
  return r.body.delivery_id as number;
}

async function typed(table: string, deliveryId: number) {
  const [row] = await database.sql`select t.* from ${database.sql(table)} t join webhook_deliveries d on d.event_key = t.event_key where d.id = ${deliveryId}`;
  return row;
}

describe('payloads as the spec shows them', () => {
  it('order/confirmed: net_term integer, bank_account object, nanosecond event_time', async () => {
    const body = `{"topic":"order/confirmed","order_uuid":"${ORDER}","order_state":"confirmed","external_reference_id":"SO-2024-0001","event_time":"2024-05-02T10:15:30.123456789Z","buyer":{"uuid":"${BUYER}","name":"Acme GmbH","legal_form":"GmbH"},"net_term":30,"bank_account":{"account_holder":"Provider GmbH","bank":"Bank","bank_name":"Bank AG","bic":"DEUTDEFF","iban":"DE89370400440532013000"}}`;
    const row = await typed('order_events', await post(body));
    expect(row).toMatchObject({ order_uuid: ORDER, order_state: 'confirmed', external_reference_id: 'SO-2024-0001', net_term_days: 30, buyer_uuid: BUYER, buyer_name: 'Acme GmbH', event_time: '2024-05-02T10:15:30.123456789Z' });
    expect((row?.bank_account as Record<string, string>).iban).toBe('DE89370400440532013000');
  });

  it('order/pending carries pending_reason_description; order/authorized a confirmation_link', async () => {
    const pending = await typed('order_events', await post(`{"topic":"order/pending","order_uuid":"${ORDER}","order_state":"pending","external_reference_id":"SO-2024-0001","event_time":"2024-05-02T10:15:31.5Z","buyer":{"uuid":"${BUYER}","name":"Acme GmbH","legal_form":"GmbH"},"pending_reason_description":"manual review"}`));
    expect(pending).toMatchObject({ order_state: 'pending', pending_reason_description: 'manual review' });
    const authorized = await typed('order_events', await post(`{"topic":"order/authorized","order_uuid":"${ORDER}","order_state":"authorized","external_reference_id":"SO-2024-0001","event_time":"2024-05-02T10:15:29.000000001Z","buyer":{"uuid":"${BUYER}","name":"Acme GmbH","legal_form":"GmbH"},"confirmation_link":"https://example.test/confirm?token=<CONFIRMATION_TOKEN>"}`));
    expect(authorized).toMatchObject({ order_state: 'authorized', confirmation_link: 'https://example.test/confirm?token=<CONFIRMATION_TOKEN>' });
  });

  it('invoice/complete gross_amount_cents as a number, invoice/payment amount_cents in minor units', async () => {
    const complete = await typed('invoice_events', await post(`{"topic":"invoice/complete","invoice_uuid":"${INVOICE}","order_uuid":"${ORDER}","external_reference_id":"RE-2024-0001","event_time":"2024-06-01T08:00:00.000Z","gross_amount_cents":119000}`));
    expect(complete).toMatchObject({ gross_amount_cents: '119000', external_reference_id: 'RE-2024-0001' });
    const payment = await typed('invoice_events', await post(`{"topic":"invoice/payment","invoice_uuid":"${INVOICE}","order_uuid":"${ORDER}","external_reference_id":"RE-2024-0001","event_time":"2024-05-30T08:00:00.000Z","amount_cents":"50000"}`));
    expect(payment).toMatchObject({ amount_cents: '50000' });
  });

  it('payout/complete: amount_cents string, external_reference_ids sent as a string', async () => {
    const row = await typed('payout_events', await post(`{"topic":"payout/complete","payout_uuid":"${PAYOUT}","sepa_instruction_id":"SEPA-20240603-0001","amount_cents":"114858","external_reference_ids":"RE-2024-0001,RE-2024-0002","event_time":"2024-06-03T06:00:00.000000Z"}`));
    expect(row).toMatchObject({ status: 'complete', amount_cents: '114858', sepa_instruction_id: 'SEPA-20240603-0001', external_reference_ids: ['RE-2024-0001', 'RE-2024-0002'] });
  });

  it('buyer/limit_updated and buyer/accepted, kyc/accepted', async () => {
    const limit = await typed('buyer_events', await post(`{"topic":"buyer/limit_updated","buyer":{"uuid":"${BUYER}","external_reference_id":"B-1","purchasing_limit_cents":"5000000","balance_cents":"1200000","max_collections_state":"none","max_purchase_value_cents":"2500000"}}`));
    expect(limit).toMatchObject({ purchasing_limit_cents: '5000000', balance_cents: '1200000', max_purchase_value_cents: '2500000', max_collections_state: 'none' });
    const accepted = await typed('buyer_events', await post(`{"topic":"buyer/accepted","buyer":{"uuid":"${BUYER}","state":"accepted","external_reference_id":"B-1","company_name":"Acme GmbH","first_name":"Ada","last_name":"Lovelace"}}`));
    expect(accepted).toMatchObject({ state: 'accepted', company_name: 'Acme GmbH' });
    const kyc = await typed('kyc_events', await post(`{"topic":"kyc/accepted","buyer":{"uuid":"${BUYER}","kyc_state":"accepted","external_reference_id":"B-1"}}`));
    expect(kyc).toMatchObject({ kyc_state: 'accepted' });
  });

  it('factoring/approved: payment_terms string of days, invoice_amount_cents string', async () => {
    const row = await typed('factoring_events', await post(`{"topic":"factoring/approved","factoring_uuid":"${FACTORING}","invoice_external_reference_id":"RE-2024-0001","invoice_uuid":"${INVOICE}","factoring_state":"approved","invoice_amount_cents":"119000","payment_method":"bank_transfer","payment_terms":"30","bank_account":{"account_holder":"Provider","bank":"Bank","bic":"DEUTDEFF","iban":"DE89370400440532013000"}}`));
    expect(row).toMatchObject({ payment_terms_days: 30, invoice_amount_cents: '119000', factoring_state: 'approved', invoice_uuid: INVOICE });
  });

  it('applicant/pending with reason and an empty address_line2; billing_configuration/created', async () => {
    const applicant = await typed('applicant_events', await post(`{"topic":"applicant/pending","reason":"documents missing","applicant":{"uuid":"${APPLICANT}","external_reference_id":"A-1","first_name":"Ada","last_name":"Lovelace","email":"ada@example.test","state":"pending","phone":"+49301234567","buyer":{"uuid":"${BUYER}","state":"pending","company_name":"Acme GmbH","registered_address":{"country_code":"DE","city":"Berlin","zip_code":"10115","address_line1":"Str. 1","address_line2":""}}}}`));
    expect(applicant).toMatchObject({ state: 'pending', reason: 'documents missing', buyer_uuid: BUYER });
    const billing = await typed('billing_configuration_events', await post(`{"topic":"billing_configuration/created","schedule":"monthly","buyer_uuid":"${BUYER}","event_time":"2024-05-02T10:15:30.123456789Z","due_in_days":30,"generation_delay_days":0,"payment_method_statement":"direct_debit","billing_configuration_uuid":"${BILLING}"}`));
    expect(billing).toMatchObject({ due_in_days: 30, generation_delay_days: 0, payment_method_statement: 'direct_debit' });
  });
});
