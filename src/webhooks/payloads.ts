import { z } from 'zod';
import { MAX_INDEXED_TEXT_LENGTH } from '../db/text.js';
import { parseEventTime } from './event-time.js';
import { cents, dayCount, smallIntegerString } from './money.js';
import { parseReferenceList } from './reference-list.js';

/**
 * zod schemas for every payload shape in the provider spec ("Payload shapes"). Objects are loose:
 * fields the spec does not show are tolerated (and kept in the raw body). Required fields are the
 * ones the spec marks "always"; everything else is optional or nullable.
 *
 * Every value a schema lets through must fit its ledger column: a value the column refuses would
 * fail the batch's statement, so it is refused here (numbers, lengths) or, for what Postgres text
 * and jsonb cannot hold, by typedRowProblem on the row itself (typed-rows.ts), and the delivery is
 * stored as invalid_shape with the field named.
 */

// Postgres uuid accepts any 8-4-4-4-12 hex; the provider's ids need not carry an RFC variant.
const uuid = z.string().regex(/^[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}$/, 'must be a UUID');
const text = z.string();
const optionalText = text.nullish();
/**
 * References and states. Some are btree index keys (order_state, invoice external_reference_id,
 * sepa_instruction_id): at most MAX_INDEXED_TEXT_LENGTH (db/text.ts).
 */
const identifier = text.max(MAX_INDEXED_TEXT_LENGTH);
const optionalIdentifier = identifier.nullish();
const eventTime = z.string().refine((v) => parseEventTime(v) !== undefined, {
  message: 'must be an ISO 8601 UTC time with Z, in years 0001-9999',
});

const bankAccount = z.looseObject({
  account_holder: optionalText,
  bank: optionalText,
  bank_name: optionalText,
  bic: optionalText,
  iban: optionalText,
  sort_code: optionalText,
  account_number: optionalText,
});

export const orderPayload = z.looseObject({
  topic: text,
  order_uuid: uuid,
  order_state: identifier.min(1),
  external_reference_id: identifier,
  event_time: eventTime,
  buyer: z.looseObject({ uuid: uuid.nullish(), name: optionalText, legal_form: optionalText }),
  pending_reason_description: optionalText,
  net_term: dayCount.nullish(),
  bank_account: bankAccount.nullish(),
  confirmation_link: optionalText,
});

export const invoicePayload = z.looseObject({
  topic: text,
  invoice_uuid: uuid,
  order_uuid: uuid.nullish(),
  // Not marked "always": an invoice event without its reference still names its invoice (the
  // invoice rules take the reference from another of its events, ledger/invoices.ts invoiceFacts).
  external_reference_id: optionalIdentifier,
  event_time: eventTime,
  gross_amount_cents: cents.nullish(),
  amount_cents: cents.nullish(),
});

export const payoutPayload = z.looseObject({
  topic: text,
  payout_uuid: uuid,
  // Null, like blank, is no reference: a payout cancelled before its transfer was instructed.
  sepa_instruction_id: optionalIdentifier,
  amount_cents: cents,
  external_reference_ids: z.union([z.string(), z.array(z.string())]).transform((value, ctx) => {
    try {
      return parseReferenceList(value);
    } catch {
      ctx.addIssue({ code: 'custom', message: 'must be a list of invoice references' });
      return z.NEVER;
    }
  }),
  event_time: eventTime,
});

/**
 * buyer/* and buyer/limit_updated: one shape with the members of both (a union would accept a
 * limit update by the looser state shape and let its amounts through unchecked).
 */
const buyer = z.looseObject({
  uuid,
  state: optionalIdentifier,
  external_reference_id: optionalIdentifier,
  company_name: optionalText,
  first_name: optionalText,
  last_name: optionalText,
  purchasing_limit_cents: cents.nullish(),
  balance_cents: cents.nullish(),
  max_collections_state: optionalIdentifier,
  max_purchase_value_cents: cents.nullish(),
});

export const buyerPayload = z.looseObject({ topic: text, buyer });

export const kycPayload = z.looseObject({
  topic: text,
  buyer: z.looseObject({ uuid, kyc_state: optionalIdentifier, external_reference_id: optionalIdentifier }),
});

export const applicantPayload = z.looseObject({
  topic: text,
  reason: optionalText,
  applicant: z.looseObject({
    uuid,
    external_reference_id: optionalIdentifier,
    first_name: optionalText,
    last_name: optionalText,
    email: optionalText,
    phone: optionalText,
    state: optionalIdentifier,
    buyer: z
      .looseObject({
        uuid: uuid.nullish(),
        state: optionalText,
        company_name: optionalText,
        registered_address: z
          .looseObject({
            country_code: optionalText,
            city: optionalText,
            zip_code: optionalText,
            address_line1: optionalText,
            address_line2: optionalText,
          })
          .nullish(),
      })
      .nullish(),
  }),
});

export const factoringPayload = z.looseObject({
  topic: text,
  factoring_uuid: uuid,
  invoice_external_reference_id: optionalIdentifier,
  invoice_uuid: uuid.nullish(),
  factoring_state: optionalIdentifier,
  invoice_amount_cents: cents.nullish(),
  payment_method: optionalText,
  payment_terms: smallIntegerString.nullish(),
  bank_account: bankAccount.nullish(),
});

export const billingConfigurationPayload = z.looseObject({
  topic: text,
  billing_configuration_uuid: uuid,
  buyer_uuid: uuid.nullish(),
  schedule: optionalText,
  due_in_days: dayCount.nullish(),
  generation_delay_days: dayCount.nullish(),
  payment_method_statement: optionalText,
  event_time: eventTime,
});

export type OrderPayload = z.infer<typeof orderPayload>;
export type InvoicePayload = z.infer<typeof invoicePayload>;
export type PayoutPayload = z.infer<typeof payoutPayload>;
export type BuyerPayload = z.infer<typeof buyerPayload>;
export type KycPayload = z.infer<typeof kycPayload>;
export type ApplicantPayload = z.infer<typeof applicantPayload>;
export type FactoringPayload = z.infer<typeof factoringPayload>;
export type BillingConfigurationPayload = z.infer<typeof billingConfigurationPayload>;
