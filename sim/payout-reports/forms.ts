import { Prng } from '../prng.js';

/**
 * How one environment's payout report files are written: spreadsheets and portals write the same
 * columns in different ways, so each seed picks a form (from its own stream, so the business and its
 * faults do not depend on it) and every file of that environment follows it.
 */
export interface ReportForm {
  /** decimal comma goes with `;` as the CSV separator and `.` for thousands; decimal point with `,` */
  decimal: ',' | '.';
  thousands: boolean;
  /** a currency sign before (decimal point) or after (decimal comma) the amount, a code after it, or none */
  currencyMark: 'none' | 'sign' | 'code';
  negatives: 'minus' | 'parentheses';
  /** the optional Payout Reference column: its header and what it holds, or absent */
  payoutReference: { header: string; value: 'sepa' | 'uuid' } | null;
  currencyColumn: boolean;
  headers: 'documented' | 'upper' | 'lower_snake';
  docTypes: 'lower' | 'title' | 'upper_snake';
  /** XLSX: amounts and rates as number cells, or as text written like the CSV's */
  xlsxNumbers: boolean;
}

const REFERENCE_COLUMNS: ReportForm['payoutReference'][] = [
  { header: 'Payout Reference', value: 'sepa' },
  { header: 'SEPA Reference', value: 'sepa' },
  { header: 'Payout ID', value: 'uuid' },
  { header: 'Payout UUID', value: 'uuid' },
];

export function reportForm(seed: string, env: string): ReportForm {
  const rng = new Prng(`${seed}/${env}/payout-report-form`);
  const decimal = rng.chance(0.5) ? ',' : '.';
  return {
    decimal,
    thousands: rng.chance(0.5),
    currencyMark: rng.pick(['none', 'sign', 'code'] as const),
    negatives: rng.chance(0.7) ? 'minus' : 'parentheses',
    payoutReference: rng.chance(0.5) ? null : rng.pick(REFERENCE_COLUMNS),
    currencyColumn: rng.chance(0.5),
    headers: rng.pick(['documented', 'documented', 'upper', 'lower_snake'] as const),
    docTypes: rng.pick(['lower', 'title', 'upper_snake'] as const),
    xlsxNumbers: rng.chance(0.5),
  };
}
