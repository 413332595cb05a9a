import { DEFAULT_FAULT_RATES, validateFaults, type FaultRates } from '../../sim/index.js';

/**
 * The demo's business: a busy merchant (a minute of demo, six simulated days, holds about 1,200
 * orders) paid out four times a day, so a minute holds some 24 payout runs: with one a day, the five
 * or six runs of a minute showed each payout fault only by chance (seed 1 showed neither
 * payout_cancelled_but_credited, payout_unknown_invoice nor payout_report_mismatch).
 */
export const DEMO_BUSINESS = { ordersPerDay: 200, payoutRunsPerDay: 4 } as const;

/**
 * DEFAULT_FAULT_RATES with the per-payout faults that only a payout can show raised to 0.2 each,
 * payouts without a bank credit (payout_not_on_statement, which needs days of real time) lowered,
 * canceled invoices paid out raised to 0.55 (few invoices are canceled in six days) and buyers paying
 * the merchant directly doubled, so that every kind the simulator injects shows in a minute
 * (test/commands/demo-kinds.test.ts plays the demo's minute for several seeds and start times).
 */
export const DEMO_FAULT_RATES: FaultRates = validateFaults({
  ...DEFAULT_FAULT_RATES,
  payoutAmountMismatch: 0.2,
  payoutNoCredit: 0.05,
  payoutUnknownInvoice: 0.2,
  payoutDuplicateSepa: 0.1,
  payoutCancelledCredited: 0.2,
  payoutReportMismatch: 0.2,
  canceledInvoicePaid: 0.55,
  buyerPaidDirectly: 0.04,
}, 'the demo\'s fault rates');
