import type { TransactionSql } from 'postgres';
import { insertIntoFound } from '../found.js';
import type { Rule, RuleParams } from '../types.js';

/**
 * payout_unknown_invoice: a payout says it pays an invoice reference that the ledger has no invoice
 * for.
 *
 * Evidence: a payout_events row (any status: a cancelled payout naming a phantom invoice is as
 * wrong) lists reference R in external_reference_ids (the spec's comma-separated string, split by
 * the receiver; blanks ignored); no invoice_events row of the environment has
 * external_reference_id = R (pass_invoice_refs, staged once per pass: invoice-common.ts); and the
 * payout's first event was received at least WEBHOOK_GRACE_SECONDS ago. The grace: the invoice's own webhooks (invoice/created ...) may still
 * be in the provider's retry window when the payout arrives, and the grace is longer than that
 * window (see missed_webhook).
 *
 * Near misses: a reference whose invoice webhook arrived (any invoice topic, even after the payout);
 * a payout received within the grace period; the same reference in another environment's ledger
 * (does not count).
 *
 * Entity the payout, subject = R (one finding per unknown reference); observed = R. Resolves when
 * an invoice event with R arrives.
 */
export const payoutUnknownInvoice: Rule = {
  kind: 'payout_unknown_invoice',
  entities: ['payout'],
  async collect(tx: TransactionSql, p: RuleParams): Promise<number> {
    const result = await tx`
      ${insertIntoFound(tx)}
      select ${p.environment}::provider_environment, 'payout_unknown_invoice', 'payout', u.payout_uuid::text, u.ref,
             null, u.sepa_instruction_id, null, u.ref,
             format('Payout %s (SEPA reference %s) lists invoice %s, which no invoice webhook in the ledger has.',
                    u.payout_uuid, coalesce(u.sepa_instruction_id, '(none)'), u.ref),
             jsonb_build_object('invoice_reference', u.ref, 'sepa_reference', u.sepa_instruction_id),
             md5(u.ref)
      from (
        -- The known references are dropped before grouping (the test reads the group key only):
        -- grouping every listing first took 1.4 s at 1,000,000 listings.
        select e.payout_uuid, trim(r.ref) as ref, max(e.sepa_instruction_id) as sepa_instruction_id
        from payout_events e
        cross join lateral unnest(e.external_reference_ids) as r(ref)
        where e.environment = ${p.environment} and trim(r.ref) <> ''
          and not exists (select 1 from pass_invoice_refs i where i.ref = trim(r.ref))
        group by e.payout_uuid, trim(r.ref)
        having min(e.received_at) <= ${p.now.toISOString()}::timestamptz - make_interval(secs => ${p.graceSeconds})
      ) u`;
    return result.count;
  },
};
