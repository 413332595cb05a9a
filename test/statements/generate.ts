import fc from 'fast-check';
import { germanIban } from '../../src/statements/account.js';

/** A generated booking: a single entry, or a batch whose transaction details cover all or part of it. */
export interface GenEntry {
  cents: bigint;
  direction: 'credit' | 'debit';
  /** the bank's entry reference: none, unique, or one shared with other entries of the day */
  ref: string | null;
  e2e: string | null;
  /** CAMT TxDtls amounts; null: no details */
  txs: bigint[] | null;
}
export interface GenDay {
  date: string;
  entries: GenEntry[];
}
export interface GenStatement {
  account: string;
  opening: bigint;
  days: GenDay[];
}

// Few distinct amounts, so equal bookings on one day are common.
const amount = fc.constantFrom(450n, 2000n, 10000n, 123n, 99999n);
const entry = (day: number, i: number) =>
  fc
    .record({
      cents: amount,
      direction: fc.constantFrom('credit' as const, 'debit' as const),
      refKind: fc.constantFrom('none', 'unique', 'shared'),
      e2e: fc.option(fc.constantFrom('E2E-A', 'E2E-B', 'PO2026030200000001'), { nil: null }),
      batch: fc.constantFrom('none', 'none', 'full', 'partial'),
      parts: fc.integer({ min: 2, max: 4 }),
    })
    .map(({ cents, direction, refKind, e2e, batch, parts }): GenEntry => {
      const ref = refKind === 'none' ? null : refKind === 'shared' ? `SHARED-${day}` : `R-${day}-${i}`;
      if (batch === 'none') return { cents, direction, ref, e2e, txs: null };
      // Full: the parts add up to the entry (the last takes the rest). Partial: one part is missing.
      const each = cents / BigInt(parts);
      const txs = Array.from({ length: parts }, (_, k) => (k === parts - 1 ? cents - each * BigInt(parts - 1) : each));
      return { cents, direction, ref, e2e, txs: batch === 'full' ? txs : txs.slice(0, -1) };
    });

export const statementArb: fc.Arbitrary<GenStatement> = fc
  .record({
    account: fc.integer({ min: 1, max: 9_999_999_999 }),
    opening: fc.bigInt({ min: -100000n, max: 1000000n }),
    days: fc.integer({ min: 1, max: 4 }).chain((n) =>
      fc.tuple(...Array.from({ length: n }, (_, d) => fc.integer({ min: 0, max: 6 }).chain((k) => fc.tuple(...Array.from({ length: k }, (_, i) => entry(d, i)))))),
    ),
  })
  .map(({ account, opening, days }) => ({
    account: germanIban('76026000', String(account)),
    opening,
    days: days.map((entries, d) => ({ date: `2026-03-${String(d + 2).padStart(2, '0')}`, entries })),
  }));

const signed = (e: GenEntry) => (e.direction === 'credit' ? e.cents : -e.cents);
export const closing = (opening: bigint, days: GenDay[]) => days.flatMap((d) => d.entries).reduce((s, e) => s + signed(e), opening);
export function booked(days: GenDay[]): { credit: bigint; debit: bigint } {
  const all = days.flatMap((d) => d.entries);
  const sum = (dir: 'credit' | 'debit') => all.filter((e) => e.direction === dir).reduce((s, e) => s + e.cents, 0n);
  return { credit: sum('credit'), debit: sum('debit') };
}

const dec = (cents: bigint, sep: string) => {
  const a = cents < 0n ? -cents : cents;
  return `${a / 100n}${sep}${(a % 100n).toString().padStart(2, '0')}`;
};

/** camt.053.001.02 with one <Stmt> per run of days given, each a whole-day period. */
/**
 * Layouts banks write besides the standard one: entries without BookgDt and ValDt (dated by the
 * statement's FrToDt: give one statement per day), only a CLBD balance, no Acct (refused).
 */
export type CamtLayout = 'standard' | 'no-dates' | 'closing-only' | 'no-account';

export function camt(s: GenStatement, statements: GenDay[][], tag = '', layout: CamtLayout = 'standard'): string {
  let balance = s.opening;
  const stmts = statements.map((days, k) => {
    const open = balance;
    balance = closing(open, days);
    const bal = (code: string, cents: bigint) =>
      `<Bal><Tp><CdOrPrtry><Cd>${code}</Cd></CdOrPrtry></Tp><Amt Ccy="EUR">${dec(cents, '.')}</Amt><CdtDbtInd>${cents < 0n ? 'DBIT' : 'CRDT'}</CdtDbtInd><Dt><Dt>${days[0]!.date}</Dt></Dt></Bal>`;
    const entries = days.flatMap((d) =>
      d.entries.map((e) => {
        const details = e.txs
          ? `<NtryDtls>${e.txs.map((t, i) => `<TxDtls><Refs><EndToEndId>${e.e2e ?? 'NOTPROVIDED'}-${i}</EndToEndId></Refs><Amt Ccy="EUR">${dec(t, '.')}</Amt></TxDtls>`).join('')}</NtryDtls>`
          : e.e2e
            ? `<NtryDtls><TxDtls><Refs><EndToEndId>${e.e2e}</EndToEndId></Refs></TxDtls></NtryDtls>`
            : '';
        return `<Ntry><Amt Ccy="EUR">${dec(e.cents, '.')}</Amt><CdtDbtInd>${e.direction === 'credit' ? 'CRDT' : 'DBIT'}</CdtDbtInd><Sts>BOOK</Sts>${layout === 'no-dates' ? '' : `<BookgDt><Dt>${d.date}</Dt></BookgDt>`}${e.ref ? `<AcctSvcrRef>${e.ref}</AcctSvcrRef>` : ''}${details}</Ntry>`;
      }),
    );
    const from = days[0]!.date;
    const to = days.at(-1)!.date;
    return `<Stmt><Id>S${k}${tag}</Id><FrToDt><FrDtTm>${from}T00:00:00</FrDtTm><ToDtTm>${to}T23:59:59</ToDtTm></FrToDt>${layout === 'no-account' ? '' : `<Acct><Id><IBAN>${s.account}</IBAN></Id><Ccy>EUR</Ccy></Acct>`}${layout === 'closing-only' ? '' : bal('OPBD', open)}${bal('CLBD', balance)}\n${entries.join('\n')}</Stmt>`;
  });
  return `<?xml version="1.0" encoding="UTF-8"?><Document xmlns="urn:iso:std:iso:20022:tech:xsd:camt.053.001.02"><BkToCstmrStmt><GrpHdr><MsgId>G${tag}</MsgId></GrpHdr>${stmts.join('\n')}</BkToCstmrStmt></Document>\n`;
}

export type Wrapper = 'plain' | 'swift' | 'abn' | 'ing' | 'eof' | 'rabo';

/**
 * Layouts banks write besides the standard one: the :28C: number continued on the next line; an
 * opening balance and only a :65F: forward balance; no balances (the currency after the :25:
 * IBAN; days without bookings then have no message); the Dutch structured :86: with '/' inside
 * its values (the end-to-end reference becomes '<e2e>/<day>/<entry>', see dutchReference).
 */
export type Mt940Layout = 'standard' | 'continued-28c' | 'opening-only' | 'no-balances' | 'dutch';

/** The end-to-end reference the 'dutch' layout writes for an entry. */
export const dutchReference = (e2e: string, day: number, entry: number) => `${e2e}/${day}/${entry}`;

/** MT940, one message per day, wrapped and separated as the given bank does. */
export function mt940(s: GenStatement, wrapper: Wrapper, lineEnd = '\r\n', layout: Mt940Layout = 'standard'): string {
  let balance = s.opening;
  const yymmdd = (d: string) => d.slice(2).replaceAll('-', '');
  const bal = (tag: string, cents: bigint, d: string) => `:${tag}:${cents < 0n ? 'D' : 'C'}${yymmdd(d)}EUR${dec(cents, ',')}`;
  const days = layout === 'no-balances' ? s.days.filter((d) => d.entries.length > 0) : s.days;
  const messages = days.map((d, k) => {
    const open = balance;
    balance = closing(open, [d]);
    const account = layout === 'no-balances' ? `${s.account}EUR` : `76026000/${s.account.slice(-10)}`;
    const number = layout === 'continued-28c' ? `${k + 1}${lineEnd}/1` : `${k + 1}/1`;
    const fields = [`:20:STARTUMS`, `:25:${account}`, `:28C:${number}`, ...(layout === 'no-balances' ? [] : [bal('60F', open, d.date)])];
    d.entries.forEach((e, i) => {
      fields.push(`:61:${yymmdd(d.date)}${yymmdd(d.date).slice(2)}${e.direction === 'credit' ? 'C' : 'D'}${dec(e.cents, ',')}NTRFNONREF${e.ref ? `//${e.ref}` : ''}`);
      if (layout === 'dutch') {
        const eref = e.e2e ? `/EREF/${dutchReference(e.e2e, k, i)}/` : '';
        fields.push(`:86:/TRTP/SEPA OVERBOEKING/${eref}/REMI/USTD//Rechnung ${k}/${i}/`);
      } else fields.push(`:86:166?00GUTSCHRIFT?20${e.e2e ? `EREF+${e.e2e}` : 'SVWZ+ohne Referenz'}`);
    });
    if (layout === 'opening-only') fields.push(bal('65F', balance, d.date));
    else if (layout !== 'no-balances') fields.push(bal('62F', balance, d.date));
    return fields.join(lineEnd);
  });
  switch (wrapper) {
    case 'plain':
      return messages.map((m) => `${m}${lineEnd}-${lineEnd}`).join('');
    case 'swift':
      return messages.map((m, i) => `{1:F01BANKDEFFAXXX000000000${i}}{2:O940}{3:{108:X}}{4:${lineEnd}${m}${lineEnd}-}{5:{CHK:0}}`).join('');
    case 'abn':
      return messages.map((m) => `ABNANL2A${lineEnd}940${lineEnd}ABNANL2A${lineEnd}${m}${lineEnd}-${lineEnd}`).join('');
    case 'ing':
      return `0000 01INGBNL2AXXXX00001${lineEnd}940 00${lineEnd}${messages.join(`${lineEnd}-${lineEnd}`)}${lineEnd}-${lineEnd}`;
    case 'eof':
      return `\x01${messages.join('\x1a')}\x1a`;
    case 'rabo':
      return `:940:${lineEnd}${messages.join(lineEnd)}${lineEnd}`;
  }
}

/** The statement as a bank's CSV export: one row per booked entry (a batch is one row), with or without the entry-reference column. */
export function csv(s: GenStatement, withReferences: boolean, lineEnd = '\r\n'): string {
  const head = ['booking_date', 'amount', 'currency', 'credit_debit', 'end_to_end_reference', 'account_iban', ...(withReferences ? ['entry_reference'] : [])];
  const rows = s.days.flatMap((d) =>
    d.entries.map((e) => [d.date, dec(e.cents, '.'), 'EUR', e.direction === 'credit' ? 'CRDT' : 'DBIT', e.e2e ?? '', s.account, ...(withReferences ? [e.ref ?? ''] : [])].join(',')),
  );
  return [head.join(','), ...rows].join(lineEnd) + lineEnd;
}

/**
 * The statement as a bank's own CSV export (src/statements/csv-profiles.ts): Deutsche Bank (debit
 * and credit in split Soll/Haben columns, the account in the preamble, a closing balance row), DKB
 * (DD.MM.YY dates, '€' amounts, a pending line per day that must not become a booking) or ING
 * Nederland (YYYYMMDD dates, unsigned amounts with Af/Bij).
 */
export function csvBank(s: GenStatement, bank: 'deutsche' | 'dkb' | 'ingnl', lineEnd = '\r\n'): string {
  const de = (d: string, short = false) => `${d.slice(8, 10)}.${d.slice(5, 7)}.${short ? d.slice(2, 4) : d.slice(0, 4)}`;
  const entries = s.days.flatMap((d) => d.entries.map((e) => ({ date: d.date, ...e })));
  let lines: string[];
  switch (bank) {
    case 'deutsche':
      lines = [
        'Umsätze Girokonto;Zeitraum: 01.03.2026 - 31.03.2026;',
        `IBAN;${s.account}`,
        'Buchungstag;Wert;Umsatzart;Begünstigter / Auftraggeber;Verwendungszweck;IBAN;BIC;Kundenreferenz;Mandatsreferenz ;Gläubiger ID;Fremde Gebühren;Betrag;Abweichender Empfänger;Anzahl der Aufträge;Anzahl der Schecks;Soll;Haben;Währung',
        ...entries.map((e) =>
          [de(e.date), de(e.date), 'SEPA', 'Partei', 'Zweck', '', '', e.e2e ?? '', '', '', '', '', '', '', '', e.direction === 'debit' ? `-${dec(e.cents, ',')}` : '', e.direction === 'credit' ? dec(e.cents, ',') : '', 'EUR'].join(';'),
        ),
        `Kontostand;${de(s.days.at(-1)?.date ?? '2026-03-31')};;;0,00;EUR`,
      ];
      break;
    case 'dkb':
      lines = [
        `"Girokonto";"${s.account}"`,
        '""',
        '"Buchungsdatum";"Wertstellung";"Status";"Zahlungspflichtige*r";"Zahlungsempfänger*in";"Verwendungszweck";"Umsatztyp";"IBAN";"Betrag (€)";"Gläubiger-ID";"Mandatsreferenz";"Kundenreferenz"',
        ...s.days.flatMap((d) => [
          `"";"${de(d.date, true)}";"Vorgemerkt";"A";"B";"offen";"Ausgang";"";"-1.234,56 €";"";"";""`,
          ...d.entries.map((e) => `"${de(d.date, true)}";"${de(d.date, true)}";"Gebucht";"A";"B";"Zweck";"${e.direction === 'credit' ? 'Eingang' : 'Ausgang'}";"";"${e.direction === 'debit' ? '-' : ''}${dec(e.cents, ',')} €";"";"";"${e.e2e ?? ''}"`),
        ]),
      ];
      break;
    case 'ingnl':
      lines = [
        '"Datum","Naam / Omschrijving","Rekening","Tegenrekening","Code","Af Bij","Bedrag (EUR)","Mutatiesoort","Mededelingen"',
        ...entries.map((e) => `"${e.date.replaceAll('-', '')}","Partij","${s.account}","","OV","${e.direction === 'credit' ? 'Bij' : 'Af'}","${dec(e.cents, ',')}","Overschrijving","${e.e2e ?? ''}"`),
      ];
      break;
  }
  return lines.join(lineEnd) + lineEnd;
}
