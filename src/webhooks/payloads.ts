import { z } from 'zod';
import { parseEventTime } from './event-time.js';
import { integerNumber, integerString, smallIntegerString } from './money.js';
import { parseReferenceList } from './reference-list.js';

/**
 * zod schemas for every payload shape in the provider spec ("Payload shapes"). Objects are loose:
 * fields the spec does not show are tolerated (and kept in the raw body). Required fields are the
 * ones the spec marks "always"; everything else is optional or nullable.
 */

// Postgres uuid accepts any 8-4-4-4-12 hex; the provider's ids need not carry an RFC variant.
const uuid = z.string().regex(/^[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}$/, 'must be a UUID');
const text = z.string();
const optionalText = z.string().nullish();
const eventTime = z.string().refine((v) => parseEventTime(v) !== undefined, {
  message: 'must be an ISO 8601 UTC time with Z',
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
  order_state: z.string().min(1),
  external_reference_id: text,
  event_time: eventTime,
  buyer: z.looseObject({ uuid: uuid.nullish(), name: optionalText, legal_form: optionalText }),
  pending_reason_description: optionalText,
  net_term: z.number().int().nullish(),
  bank_account: bankAccount.nullish(),
  confirmation_link: optionalText,
});

export const invoicePayload = z.looseObject({
  topic: text,
  invoice_uuid: uuid,
  order_uuid: uuid.nullish(),
  external_reference_id: text,
  event_time: eventTime,
  gross_amount_cents: integerNumber.nullish(),
  amount_cents: integerString.nullish(),
});

export const payoutPayload = z.looseObject({
  topic: text,
  payout_uuid: uuid,
  sepa_instruction_id: text,
  amount_cents: integerString,
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

const buyerLimit = z.looseObject({
  uuid,
  external_reference_id: optionalText,
  purchasing_limit_cents: integerString.nullish(),
  balance_cents: integerString.nullish(),
  max_collections_state: optionalText,
  max_purchase_value_cents: integerString.nullish(),
});

const buyerState = z.looseObject({
  uuid,
  state: optionalText,
  external_reference_id: optionalText,
  company_name: optionalText,
  first_name: optionalText,
  last_name: optionalText,
});

export const buyerPayload = z.looseObject({ topic: text, buyer: z.union([buyerState, buyerLimit]) });

export const kycPayload = z.looseObject({
  topic: text,
  buyer: z.looseObject({ uuid, kyc_state: optionalText, external_reference_id: optionalText }),
});

export const applicantPayload = z.looseObject({
  topic: text,
  reason: optionalText,
  applicant: z.looseObject({
    uuid,
    external_reference_id: optionalText,
    first_name: optionalText,
    last_name: optionalText,
    email: optionalText,
    phone: optionalText,
    state: optionalText,
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
  invoice_external_reference_id: optionalText,
  invoice_uuid: uuid.nullish(),
  factoring_state: optionalText,
  invoice_amount_cents: integerString.nullish(),
  payment_method: optionalText,
  payment_terms: smallIntegerString.nullish(),
  bank_account: bankAccount.nullish(),
});

export const billingConfigurationPayload = z.looseObject({
  topic: text,
  billing_configuration_uuid: uuid,
  buyer_uuid: uuid.nullish(),
  schedule: optionalText,
  due_in_days: z.number().int().nullish(),
  generation_delay_days: z.number().int().nullish(),
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
