/**
 * Writes the statements benchmark's files as streams (never whole in memory): a CAMT.053 and an
 * MT940 of `entries` bookings in daily statements of `perStatement` entries, each booking with an
 * entry reference, an end-to-end reference, a counterparty and a remittance text, as a merchant's
 * account statement has them.
 */
import { createWriteStream, type WriteStream } from 'node:fs';
import { once } from 'node:events';

const IBAN = 'DE44500105175407324931';
const dec = (cents: number, sep: string) => `${Math.floor(cents / 100)}${sep}${String(cents % 100).padStart(2, '0')}`;
const dayOf = (k: number) => new Date(Date.UTC(2026, 0, 1) + k * 86_400_000).toISOString().slice(0, 10);
// A fixed pseudo-random amount per entry: credits and debits, 0.01 to 9,999.99.
const amountOf = (i: number) => ((i * 7919) % 999_999) + 1;
const creditOf = (i: number) => i % 3 !== 0;

async function write(out: WriteStream, text: string): Promise<void> {
  if (!out.write(text)) await once(out, 'drain');
}

async function finish(out: WriteStream): Promise<void> {
  out.end();
  await once(out, 'finish');
}

export async function writeCamt(file: string, entries: number, perStatement: number): Promise<void> {
  const out = createWriteStream(file);
  await write(out, '<?xml version="1.0" encoding="UTF-8"?>\n<Document xmlns="urn:iso:std:iso:20022:tech:xsd:camt.053.001.02"><BkToCstmrStmt><GrpHdr><MsgId>BENCH</MsgId></GrpHdr>\n');
  let balance = 0;
  for (let s = 0, i = 0; i < entries; s += 1) {
    const day = dayOf(s);
    const n = Math.min(perStatement, entries - i);
    let close = balance;
    for (let k = i; k < i + n; k += 1) close += creditOf(k) ? amountOf(k) : -amountOf(k);
    const bal = (code: string, cents: number) =>
      `<Bal><Tp><CdOrPrtry><Cd>${code}</Cd></CdOrPrtry></Tp><Amt Ccy="EUR">${dec(Math.abs(cents), '.')}</Amt><CdtDbtInd>${cents < 0 ? 'DBIT' : 'CRDT'}</CdtDbtInd><Dt><Dt>${day}</Dt></Dt></Bal>`;
    await write(out, `<Stmt><Id>S${s}</Id><ElctrncSeqNb>${s + 1}</ElctrncSeqNb><FrToDt><FrDtTm>${day}T00:00:00</FrDtTm><ToDtTm>${day}T23:59:59</ToDtTm></FrToDt><Acct><Id><IBAN>${IBAN}</IBAN></Id><Ccy>EUR</Ccy></Acct>${bal('OPBD', balance)}${bal('CLBD', close)}\n`);
    let chunk = '';
    for (let k = i; k < i + n; k += 1) {
      const credit = creditOf(k);
      const party = credit ? 'Dbtr' : 'Cdtr';
      chunk +=
        `<Ntry><Amt Ccy="EUR">${dec(amountOf(k), '.')}</Amt><CdtDbtInd>${credit ? 'CRDT' : 'DBIT'}</CdtDbtInd><Sts>BOOK</Sts>` +
        `<BookgDt><Dt>${day}</Dt></BookgDt><ValDt><Dt>${day}</Dt></ValDt><AcctSvcrRef>B${k}</AcctSvcrRef>` +
        `<NtryDtls><TxDtls><Refs><EndToEndId>E2E-${k}</EndToEndId></Refs><AmtDtls><TxAmt><Amt Ccy="EUR">${dec(amountOf(k), '.')}</Amt></TxAmt></AmtDtls>` +
        `<RltdPties><${party}><Nm>Counterparty ${k % 1000}</Nm></${party}><${party}Acct><Id><IBAN>DE89370400440532013000</IBAN></Id></${party}Acct></RltdPties>` +
        `<RmtInf><Ustrd>Invoice ${k} of customer ${k % 5000}</Ustrd></RmtInf></TxDtls></NtryDtls></Ntry>\n`;
      if (chunk.length > 1 << 16) {
        await write(out, chunk);
        chunk = '';
      }
    }
    await write(out, `${chunk}</Stmt>\n`);
    balance = close;
    i += n;
  }
  await write(out, '</BkToCstmrStmt></Document>\n');
  await finish(out);
}

export async function writeMt940(file: string, entries: number, perStatement: number): Promise<void> {
  const out = createWriteStream(file);
  const yymmdd = (d: string) => d.slice(2).replaceAll('-', '');
  const bal = (tag: string, cents: number, d: string) => `:${tag}:${cents < 0 ? 'D' : 'C'}${yymmdd(d)}EUR${dec(Math.abs(cents), ',')}\r\n`;
  let balance = 0;
  for (let s = 0, i = 0; i < entries; s += 1) {
    const day = dayOf(s);
    const n = Math.min(perStatement, entries - i);
    let chunk = `{1:F01DEUTDEFFAXXX0000000000}{2:O940}{4:\r\n:20:STARTUMS\r\n:25:50010517/5407324931\r\n:28C:${s + 1}/1\r\n${bal('60F', balance, day)}`;
    for (let k = i; k < i + n; k += 1) {
      const credit = creditOf(k);
      balance += credit ? amountOf(k) : -amountOf(k);
      const info = `166?00${credit ? 'SEPA-GUTSCHRIFT' : 'SEPA-UEBERWEISUNG'}?20EREF+E2E-${k}?21SVWZ+Invoice ${k} of customer ${k % 5000}?31DE89370400440532013000?32Counterparty ${k % 1000}`;
      chunk += `:61:${yymmdd(day)}${yymmdd(day).slice(2)}${credit ? 'C' : 'D'}${dec(amountOf(k), ',')}NTRFNONREF//B${k}\r\n:86:${(info.match(/.{1,65}/g) ?? []).join('\r\n')}\r\n`;
      if (chunk.length > 1 << 16) {
        await write(out, chunk);
        chunk = '';
      }
    }
    await write(out, `${chunk}${bal('62F', balance, day)}-}\r\n`);
    i += n;
  }
  await finish(out);
}
