export {
  CSV_DELIMITERS, REPORT_FORMATS, contentTypeFor, csvField, csvHeader, csvRecord, neutralise, parseDelimiter, renderBatch,
  type CsvDelimiter, type CsvOptions, type ReportFormat, type ReportShape,
} from './format.js';
export { streamReport, type StreamResult } from './writer.js';
export { decodeCursor, encodeCursor, fetchAll, fetchPage, openBatches, streamSource, type ReportRow, type ReportSource } from './source.js';
export {
  DISCREPANCY_COLUMNS, DISCREPANCY_SHAPE, STATUS_FILTERS, discrepancySource, parseDiscrepancyQuery, streamDiscrepancies,
  type DiscrepancyFilters, type DiscrepancyQueryInput, type StatusFilter,
} from './discrepancies.js';
export { ORDER_COLUMNS, ordersSource, streamOrdersReport, type OrdersReportFilters } from './orders.js';
export { PAYOUT_COLUMNS, payoutsSource, streamPayoutsReport } from './payouts.js';
export { renderXlsx, XLSX_MAX_ROWS } from './xlsx.js';
export {
  DELIVERY_COLUMNS, DELIVERY_STATUS_FILTERS, deliveriesSource, parseDeliveryStatus, streamDeliveriesReport,
  type DeliveriesReportFilters, type DeliveryStatusFilter,
} from './deliveries.js';
