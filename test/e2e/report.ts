import { Writable } from 'node:stream';
import type { Database } from '../../src/db/database.js';
import { parseDiscrepancyQuery, streamDiscrepancies } from '../../src/reports/discrepancies.js';
import type { ReportRow, RowLedgerFacts } from './score.js';

/** `report discrepancies --format json --status all`, through the same parser and stream as the command. */
export async function discrepancyReport(database: Database, args: { status?: string; env?: string } = {}): Promise<ReportRow[]> {
  const { filters, format } = parseDiscrepancyQuery({ format: 'json', status: args.status ?? 'all', env: args.env });
  const chunks: string[] = [];
  const sink = new Writable({
    write(chunk: Buffer | string, _encoding, callback) {
      chunks.push(chunk.toString());
      callback();
    },
  });
  const result = await streamDiscrepancies(database, filters, format, sink);
  if (result.aborted) throw new Error('report stream aborted');
  const rows = JSON.parse(chunks.join('')) as ReportRow[];
  if (rows.length !== result.rows) throw new Error(`report said ${result.rows} rows, JSON held ${rows.length}`);
  return rows;
}

/** The facts the report leaves out that matching needs (see RowLedgerFacts). */
export async function ledgerFacts(database: Database): Promise<Map<number, RowLedgerFacts>> {
  const rows = await database.sql<{ id: number; subject: string; event_key: string | null; entity_id: string | null }[]>`
    select d.id::int as id, d.subject, w.event_key, w.entity_id::text as entity_id
    from discrepancies d
    left join webhook_deliveries w on d.kind = 'duplicate_delivery' and w.id::text = d.entity_id`;
  return new Map(rows.map((r) => [r.id, { subject: r.subject, eventKey: r.event_key, deliveredEntityId: r.entity_id }]));
}

/** Rows without the fields every pass moves, to compare two reports for "nothing changed". */
export function stable(rows: readonly ReportRow[]): Omit<ReportRow, 'last_checked_at'>[] {
  return rows.map(({ last_checked_at: _moved, ...rest }) => rest);
}
