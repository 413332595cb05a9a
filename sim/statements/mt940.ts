import { formatCents } from '../money.js';
import { isoDate } from '../time.js';
import { closingBalance, type StatementInput } from './types.js';

function yymmdd(at: number): string {
  return isoDate(at).slice(2).replaceAll('-', '');
}

function mtAmount(cents: bigint): string {
  return formatCents(cents < 0n ? -cents : cents, ',');
}

/** SWIFT MT940 characters only; the umlauts of German names are spelled out. */
function swiftText(text: string): string {
  return text
    .replace(/ä/g, 'ae').replace(/ö/g, 'oe').replace(/ü/g, 'ue').replace(/Ä/g, 'Ae').replace(/Ö/g, 'Oe').replace(/Ü/g, 'Ue').replace(/ß/g, 'ss')
    .replace(/[^A-Za-z0-9/\-?:().,'+ ]/g, ' ');
}

/**
 * MT940 as German banks send it: :86: with the structured ?-subfields, the SEPA reference as
 * EREF+ in ?20, the remittance text as SVWZ+ in ?21, the counterparty in ?32 and ?31.
 */
export function mt940(s: StatementInput): string {
  const open = s.openingBalanceCents;
  const close = closingBalance(s);
  const out = [
    `:20:${s.id.slice(0, 16)}`,
    `:25:${s.accountIban}`,
    ':28C:1/1',
    `:60F:${open < 0n ? 'D' : 'C'}${yymmdd(s.from)}${s.currency}${mtAmount(open)}`,
  ];
  for (const line of s.lines) {
    const date = yymmdd(line.bookedAt);
    out.push(`:61:${date}${date.slice(2)}${line.amountCents < 0n ? 'D' : 'C'}${mtAmount(line.amountCents)}NTRFNONREF//${line.id}`);
    // The remittance continues over ?21..?29, 27 characters each, as German banks split it.
    const remittance = (`SVWZ+${swiftText(line.remittance)}`.match(/.{1,27}/g) ?? []).slice(0, 9).map((part, i) => `?${21 + i}${part}`).join('');
    const details = `166?00${line.amountCents < 0n ? 'SEPA-UEBERWEISUNG' : 'SEPA-GUTSCHRIFT'}?20EREF+${line.reference || 'NOTPROVIDED'}${remittance}?31${line.counterpartyIban}?32${swiftText(line.counterpartyName).slice(0, 27)}`;
    const chunks = details.match(/.{1,65}/g) ?? [];
    out.push(`:86:${chunks[0] ?? ''}`, ...chunks.slice(1));
  }
  out.push(`:62F:${close < 0n ? 'D' : 'C'}${yymmdd(s.to)}${s.currency}${mtAmount(close)}`, '-');
  return `${out.join('\r\n')}\r\n`;
}
