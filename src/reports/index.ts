export { REPORT_FORMATS, contentTypeFor, csvField, csvRecord, type ReportFormat } from './format.js';
export { streamReport, type StreamResult } from './writer.js';
export {
  DISCREPANCY_COLUMNS, STATUS_FILTERS, parseDiscrepancyQuery, streamDiscrepancies,
  type DiscrepancyFilters, type DiscrepancyQueryInput, type StatusFilter,
} from './discrepancies.js';
export { ORDER_COLUMNS, streamOrdersReport, type OrdersReportFilters } from './orders.js';
export { PAYOUT_COLUMNS, streamPayoutsReport } from './payouts.js';
