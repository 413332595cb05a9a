/**
 * Webhook payloads in exactly the spec's shapes and field order. *_cents travel as integer
 * strings except invoice/complete's gross_amount_cents, which the spec sends as a number;
 * payout external_reference_ids is one comma-separated string (the spec: "sent as a string").
 */
export interface BankAccount {
  account_holder: string;
  bank: string;
  bank_name: string;
  bic: string;
  iban: string;
}

export interface BuyerRef {
  uuid: string;
  name: string;
  legal_form: string;
}

export interface OrderPayloadInput {
  topic: string;
  orderUuid: string;
  state: string;
  externalReferenceId: string;
  eventTime: string;
  buyer: BuyerRef;
  pendingReason?: string;
  netTermDays?: number;
  bankAccount?: BankAccount;
  confirmationLink?: string;
}

export function orderPayload(p: OrderPayloadInput): Record<string, unknown> {
  const body: Record<string, unknown> = {
    topic: p.topic,
    order_uuid: p.orderUuid,
    order_state: p.state,
    external_reference_id: p.externalReferenceId,
    event_time: p.eventTime,
    buyer: { uuid: p.buyer.uuid, name: p.buyer.name, legal_form: p.buyer.legal_form },
  };
  if (p.pendingReason !== undefined) body.pending_reason_description = p.pendingReason;
  if (p.netTermDays !== undefined) body.net_term = p.netTermDays;
  if (p.bankAccount !== undefined) body.bank_account = { ...p.bankAccount };
  if (p.confirmationLink !== undefined) body.confirmation_link = p.confirmationLink;
  return body;
}

export function invoicePayload(p: {
  topic: string;
  invoiceUuid: string;
  orderUuid: string;
  externalReferenceId: string;
  eventTime: string;
  grossAmountCents?: bigint;
  amountCents?: bigint;
}): Record<string, unknown> {
  const body: Record<string, unknown> = {
    topic: p.topic,
    invoice_uuid: p.invoiceUuid,
    order_uuid: p.orderUuid,
    external_reference_id: p.externalReferenceId,
    event_time: p.eventTime,
  };
  // A JSON number: the spec's one exception. Invoice totals stay far below 2^53 cents.
  if (p.grossAmountCents !== undefined) body.gross_amount_cents = Number(p.grossAmountCents);
  if (p.amountCents !== undefined) body.amount_cents = p.amountCents.toString();
  return body;
}

export function payoutPayload(p: {
  topic: 'payout/complete' | 'payout/cancelled';
  payoutUuid: string;
  sepaInstructionId: string;
  amountCents: bigint;
  externalReferenceIds: readonly string[];
  eventTime: string;
}): Record<string, unknown> {
  return {
    topic: p.topic,
    payout_uuid: p.payoutUuid,
    sepa_instruction_id: p.sepaInstructionId,
    amount_cents: p.amountCents.toString(),
    external_reference_ids: p.externalReferenceIds.join(','),
    event_time: p.eventTime,
  };
}

export interface BuyerRecord {
  uuid: string;
  externalReferenceId: string;
  companyName: string;
  legalForm: string;
  firstName: string;
  lastName: string;
  email: string;
  phone: string;
  address: { country_code: string; city: string; zip_code: string; address_line1: string; address_line2: string };
}

/** buyer/accepted's shape; buyer/pending and buyer/declined (no example in the spec) reuse it. */
export function buyerStatePayload(topic: string, b: BuyerRecord, state: string): Record<string, unknown> {
  return {
    topic,
    buyer: {
      uuid: b.uuid,
      state,
      external_reference_id: b.externalReferenceId,
      company_name: b.companyName,
      first_name: b.firstName,
      last_name: b.lastName,
    },
  };
}

export function buyerLimitPayload(
  b: BuyerRecord,
  limit: { purchasingLimitCents: bigint; balanceCents: bigint; maxCollectionsState: string; maxPurchaseValueCents: bigint },
): Record<string, unknown> {
  return {
    topic: 'buyer/limit_updated',
    buyer: {
      uuid: b.uuid,
      external_reference_id: b.externalReferenceId,
      purchasing_limit_cents: limit.purchasingLimitCents.toString(),
      balance_cents: limit.balanceCents.toString(),
      max_collections_state: limit.maxCollectionsState,
      max_purchase_value_cents: limit.maxPurchaseValueCents.toString(),
    },
  };
}

/** kyc/accepted's shape; kyc/pending and kyc/declined reuse it with their state. */
export function kycPayload(topic: string, b: BuyerRecord, kycState: string): Record<string, unknown> {
  return { topic, buyer: { uuid: b.uuid, kyc_state: kycState, external_reference_id: b.externalReferenceId } };
}

export function applicantPayload(
  topic: 'applicant/pending' | 'applicant/accepted',
  a: { uuid: string; externalReferenceId: string; firstName: string; lastName: string; email: string; phone: string },
  state: string,
  buyer: BuyerRecord,
  buyerState: string,
  reason?: string,
): Record<string, unknown> {
  const body: Record<string, unknown> = {
    topic,
    applicant: {
      uuid: a.uuid,
      external_reference_id: a.externalReferenceId,
      first_name: a.firstName,
      last_name: a.lastName,
      email: a.email,
      state,
      phone: a.phone,
      buyer: { uuid: buyer.uuid, state: buyerState, company_name: buyer.companyName, registered_address: { ...buyer.address } },
    },
  };
  if (reason !== undefined) body.reason = reason;
  return body;
}

export function factoringPayload(p: {
  topic: 'factoring/approved' | 'factoring/pending' | 'factoring/declined';
  factoringUuid: string;
  invoiceExternalReferenceId: string;
  factoringState: string;
  invoiceAmountCents: bigint;
  paymentMethod: string;
  paymentTermsDays: number;
  invoiceUuid?: string;
  bankAccount?: BankAccount;
}): Record<string, unknown> {
  const body: Record<string, unknown> = {
    topic: p.topic,
    factoring_uuid: p.factoringUuid,
    invoice_external_reference_id: p.invoiceExternalReferenceId,
    factoring_state: p.factoringState,
    invoice_amount_cents: p.invoiceAmountCents.toString(),
    payment_method: p.paymentMethod,
    payment_terms: String(p.paymentTermsDays),
  };
  if (p.invoiceUuid !== undefined) body.invoice_uuid = p.invoiceUuid;
  if (p.bankAccount !== undefined) {
    const { account_holder, bank, bic, iban } = p.bankAccount;
    body.bank_account = { account_holder, bank, bic, iban };
  }
  return body;
}

export function billingConfigurationPayload(p: {
  schedule: string;
  buyerUuid: string;
  eventTime: string;
  dueInDays: number;
  generationDelayDays: number;
  paymentMethodStatement: 'bank_transfer' | 'direct_debit';
  uuid: string;
}): Record<string, unknown> {
  return {
    topic: 'billing_configuration/created',
    schedule: p.schedule,
    buyer_uuid: p.buyerUuid,
    event_time: p.eventTime,
    due_in_days: p.dueInDays,
    generation_delay_days: p.generationDelayDays,
    payment_method_statement: p.paymentMethodStatement,
    billing_configuration_uuid: p.uuid,
  };
}
