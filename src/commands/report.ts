import { parseArgs } from 'node:util';
import { withContext, type Command } from './command.js';
import { UsageError } from '../config/usage-error.js';
import { environmentSchema, type ProviderEnvironment } from '../config/schema.js';
import { parseDiscrepancyQuery, streamDiscrepancies } from '../reports/discrepancies.js';
import { REPORT_FORMATS, parseDelimiter, type CsvOptions, type ReportFormat } from '../reports/format.js';
import { streamOrdersReport } from '../reports/orders.js';
import { streamPayoutsReport } from '../reports/payouts.js';
import { unstatedCurrency } from '../payout-reports/contract-terms.js';
import { streamInvoicesReport } from '../reports/invoices.js';
import { parseDeliveryStatus, streamDeliveriesReport, type DeliveryStatusFilter } from '../reports/deliveries.js';
import type { StreamResult } from '../reports/writer.js';
import type { Database } from '../db/database.js';

const HELP = `Usage: bnpl-recon report discrepancies|orders|payouts|invoices|deliveries [options]

Writes the report to stdout (logs go to stderr). CSV is RFC 4180 (header row, CRLF, quoted fields);
JSON is one array of objects with the same fields. Rows are streamed from the database, so reports of
millions of rows run in constant memory. In CSV, a text field starting with = + - @ tab or CR gets a
leading ' (OWASP CSV injection rule) so a spreadsheet shows it as text; amounts are decimal text
(12.50) next to their currency and cents; timestamps ISO 8601 UTC to the second.

every report
  --bom                 start the CSV with a UTF-8 byte-order mark (spreadsheets then read UTF-8)
  --delimiter D         ',' (default), ';' (for locales with decimal commas: amounts then
                        written with one, 12,05) or tab

report discrepancies
  --format csv|json     default csv
  --status S            open (default), resolved, acknowledged or all
  --kind K              only this kind; repeatable (e.g. --kind missed_webhook --kind orphan_webhook)
  --since ISO-8601      only discrepancies first detected at or after this instant
  --env sandbox|production   default: every environment (each row names its own)
  --search TEXT         only those whose entity id, external or SEPA reference contains TEXT

                      columns: id, kind, status, environment, entity_type, entity_id,
                      external_reference_id, sepa_reference, expected, observed, details,
                      first_detected_at, last_checked_at, resolved_at, amount_cents, amount,
                      currency, acknowledged_by, acknowledged_at, ack_note

report orders         one row per order: uuid, external_reference_id, api_state, webhook_state,
                      last_event_time, deliveries, open_discrepancies
  --format csv|json, --env sandbox|production (default PROVIDER_ENV)

report payouts        one row per payout: payout_uuid, sepa_reference, amount_cents, amount, currency,
                      status, matched_bank_line (empty until statements are imported),
                      invoice_references, credited_cents, credited_amount, difference, received_at,
                      and the payout report's composition (empty until it is imported), each as
                      _cents and decimal: report_gross, report_fee (discount and fixed fees),
                      report_vat, report_credit_notes, report_buyer_payments,
                      report_other_deductions (disputes), report_net
  --format csv|json, --env sandbox|production (default PROVIDER_ENV)

report invoices       one row per invoice: invoice_uuid, reference, order_uuid, invoice_date,
                      amount_cents, amount, currency, factoring_state, canceled, payout_uuid,
                      payout_sepa_reference, payout_date, payouts (completed payouts listing it),
                      deductions_cents, deductions, net_cents, net (from the payout report),
                      bank_credit_date, days_to_cash, open_findings
  --ageing              instead, the invoices not yet paid out by days since the invoice date:
                      bucket (0-7, 8-30, 31-60, over 60), invoices, amount_cents, amount, currency
  --format csv|json, --env sandbox|production (default PROVIDER_ENV)

report deliveries     what is still stored unparsed: one row per status, topic and reason with
                      status, topic, reason, count, first_delivery_id, first_received_at,
                      last_received_at, parser_version ('ledger reparse' re-reads them)
  --status S            unknown_topic, invalid_shape or unparsed (both; the default)
  --format csv|json, --env sandbox|production (default PROVIDER_ENV)`;

function formatOf(value: string | undefined): ReportFormat {
  const format = value ?? 'csv';
  if (!(REPORT_FORMATS as readonly string[]).includes(format)) throw new UsageError(`--format must be csv or json, not '${format}'`);
  return format as ReportFormat;
}

function envOf(value: string | undefined, fallback: ProviderEnvironment): ProviderEnvironment {
  if (value === undefined) return fallback;
  const parsed = environmentSchema.safeParse(value);
  if (!parsed.success) throw new UsageError(`--env must be sandbox or production, not '${value}'`);
  return parsed.data;
}

export const command: Command = {
  summary: 'write a report (discrepancies, orders, payouts, invoices, deliveries) to stdout',
  help: HELP,
  async run(argv) {
    const [which, ...rest] = argv;
    if (which !== 'discrepancies' && which !== 'orders' && which !== 'payouts' && which !== 'invoices' && which !== 'deliveries') {
      throw new UsageError(`report needs one of discrepancies, orders, payouts, invoices, deliveries${which ? `, not '${which}'` : ''}`);
    }
    const { values, positionals } = parseArgs({
      args: rest,
      strict: true,
      allowPositionals: true,
      options: {
        format: { type: 'string' },
        status: { type: 'string' },
        kind: { type: 'string', multiple: true },
        since: { type: 'string' },
        env: { type: 'string' },
        search: { type: 'string' },
        bom: { type: 'boolean' },
        delimiter: { type: 'string' },
        ageing: { type: 'boolean' },
      },
    });
    if (positionals.length > 0) throw new UsageError(`unexpected argument '${positionals[0]}'`);
    if (which !== 'discrepancies' && (values.kind || values.since || values.search)) {
      throw new UsageError(`--kind, --since and --search apply to report discrepancies only`);
    }
    if (which !== 'invoices' && values.ageing) throw new UsageError(`--ageing applies to report invoices only`);
    if (which !== 'discrepancies' && which !== 'deliveries' && values.status) throw new UsageError(`--status applies to report discrepancies and deliveries only`);
    const deliveryStatus = which === 'deliveries' ? parseDeliveryStatus(values.status) : 'unparsed';
    const delimiter = parseDelimiter(values.delimiter);
    if (!delimiter) throw new UsageError(`--delimiter must be ',', ';' or tab, not '${values.delimiter}'`);
    const csv: CsvOptions = { delimiter, bom: values.bom === true };
    // Validate everything before opening the database, so bad usage exits 2 at once.
    const query = which === 'discrepancies' ? parseDiscrepancyQuery({ format: values.format, status: values.status, kind: values.kind, since: values.since, env: values.env, search: values.search }) : undefined;
    const format = formatOf(values.format);
    envOf(values.env, 'sandbox');
    // A closed pipe (`| head`) ends the report quietly instead of crashing on EPIPE; any other
    // error writing stdout (a full disk: ENOSPC, EIO) leaves the report cut short, which must not
    // exit 0 as if it had been written.
    let writeError: NodeJS.ErrnoException | undefined;
    const onError = (error: NodeJS.ErrnoException): void => {
      if (error.code !== 'EPIPE') writeError ??= error;
    };
    process.stdout.on('error', onError);
    try {
      return await withContext('report', { access: 'reader' }, async (ctx) => {
        const result = await write(ctx.database, which, query, format, envOf(values.env, ctx.config.PROVIDER_ENV), csv, deliveryStatus, values.ageing === true, unstatedCurrency(ctx.config.CONTRACT_TERMS));
        ctx.log.debug({ report: which, rows: result.rows, aborted: result.aborted }, 'report written');
        if (writeError) {
          ctx.log.error({ err: writeError.message, code: writeError.code }, `report ${which} not written whole: cannot write stdout (${writeError.code ?? writeError.message})`);
          return 1;
        }
        return 0;
      });
    } finally {
      process.stdout.off('error', onError);
    }
  },
};

function write(
  database: Database,
  which: 'discrepancies' | 'orders' | 'payouts' | 'invoices' | 'deliveries',
  query: ReturnType<typeof parseDiscrepancyQuery> | undefined,
  format: ReportFormat,
  env: ProviderEnvironment,
  csv: CsvOptions,
  deliveryStatus: DeliveryStatusFilter,
  ageing: boolean,
  currency: string,
): Promise<StreamResult> {
  if (which === 'invoices') return streamInvoicesReport(database, { environment: env, ageing, currency }, format, process.stdout, csv);
  if (which === 'discrepancies') return streamDiscrepancies(database, { ...query!.filters, currency }, query!.format, process.stdout, csv);
  if (which === 'deliveries') return streamDeliveriesReport(database, { environment: env, status: deliveryStatus }, format, process.stdout, csv);
  if (which === 'orders') return streamOrdersReport(database, { environment: env }, format, process.stdout, csv);
  return streamPayoutsReport(database, { environment: env, currency }, format, process.stdout, csv);
}
