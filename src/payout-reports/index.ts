export { readPayoutReport, PayoutReportFormatError, type ReadPayoutReportOptions, type PayoutDocType, type PayoutReportFile, type PayoutReportRow } from './read.js';
export { PAYOUT_REPORT_COLUMN_NAMES, documentedColumn, type PayoutReportColumn } from './columns.js';
export type { PayoutCurrency } from './amounts.js';
export { centsText, percentText } from './decimal.js';
export { parseContractTerms, contractTermsFromSetting, ContractTermsError, type ContractTerms, type MdrEntry } from './contract-terms.js';
export {
  expectedDeductions,
  judgeRow,
  mdrRateFor,
  roundMicroCents,
  withinRounding,
  microCentsText,
  type DeductionAspect,
  type DeductionFinding,
  type ExpectedDeductions,
  type InvoiceFacts,
  type RateChoice,
} from './deductions.js';
