import { formatCents } from '../money.js';
import { isoDate, isoSeconds } from '../time.js';
import { closingBalance, type StatementInput } from './types.js';

function esc(text: string): string {
  return text.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;').replace(/"/g, '&quot;').replace(/'/g, '&apos;');
}

function amount(cents: bigint, currency: string): string {
  return `<Amt Ccy="${esc(currency)}">${formatCents(cents < 0n ? -cents : cents)}</Amt>`;
}

function balance(code: 'OPBD' | 'CLBD', cents: bigint, currency: string, at: number): string {
  return [
    '      <Bal>',
    `        <Tp><CdOrPrtry><Cd>${code}</Cd></CdOrPrtry></Tp>`,
    `        ${amount(cents, currency)}`,
    `        <CdtDbtInd>${cents < 0n ? 'DBIT' : 'CRDT'}</CdtDbtInd>`,
    `        <Dt><Dt>${isoDate(at)}</Dt></Dt>`,
    '      </Bal>',
  ].join('\n');
}

/**
 * ISO 20022 camt.053.001.02 (the version German banks still send most). Hand-written rather than
 * built from objects: the element order is fixed by the schema and easy to read here. The SEPA
 * reference travels where banks put it: EndToEndId, InstrId and the unstructured remittance text.
 */
export function camt053(s: StatementInput): string {
  const entries = s.lines.map((line) => {
    const credit = line.amountCents >= 0n;
    const party = credit
      ? `<Dbtr><Nm>${esc(line.counterpartyName)}</Nm></Dbtr><DbtrAcct><Id><IBAN>${esc(line.counterpartyIban)}</IBAN></Id></DbtrAcct>`
      : `<Cdtr><Nm>${esc(line.counterpartyName)}</Nm></Cdtr><CdtrAcct><Id><IBAN>${esc(line.counterpartyIban)}</IBAN></Id></CdtrAcct>`;
    return [
      '      <Ntry>',
      `        <NtryRef>${esc(line.id)}</NtryRef>`,
      `        ${amount(line.amountCents, s.currency)}`,
      `        <CdtDbtInd>${credit ? 'CRDT' : 'DBIT'}</CdtDbtInd>`,
      '        <Sts>BOOK</Sts>',
      `        <BookgDt><Dt>${isoDate(line.bookedAt)}</Dt></BookgDt>`,
      `        <ValDt><Dt>${isoDate(line.bookedAt)}</Dt></ValDt>`,
      `        <AcctSvcrRef>${esc(line.id)}</AcctSvcrRef>`,
      `        <BkTxCd><Domn><Cd>PMNT</Cd><Fmly><Cd>${credit ? 'RCDT' : 'ICDT'}</Cd><SubFmlyCd>ESCT</SubFmlyCd></Fmly></Domn></BkTxCd>`,
      '        <NtryDtls><TxDtls>',
      // NOTPROVIDED is SEPA's filler when the payer gave no reference.
      `          <Refs><InstrId>${esc(line.reference || 'NOTPROVIDED')}</InstrId><EndToEndId>${esc(line.reference || 'NOTPROVIDED')}</EndToEndId></Refs>`,
      `          <AmtDtls><TxAmt>${amount(line.amountCents, s.currency)}</TxAmt></AmtDtls>`,
      `          <RltdPties>${party}</RltdPties>`,
      `          <RmtInf><Ustrd>${esc(line.remittance)}</Ustrd></RmtInf>`,
      '        </TxDtls></NtryDtls>',
      '      </Ntry>',
    ].join('\n');
  });
  return [
    '<?xml version="1.0" encoding="UTF-8"?>',
    '<Document xmlns="urn:iso:std:iso:20022:tech:xsd:camt.053.001.02" xmlns:xsi="http://www.w3.org/2001/XMLSchema-instance">',
    '  <BkToCstmrStmt>',
    `    <GrpHdr><MsgId>${esc(s.id)}</MsgId><CreDtTm>${isoSeconds(s.createdAt)}</CreDtTm></GrpHdr>`,
    '    <Stmt>',
    `      <Id>${esc(s.id)}</Id>`,
    '      <ElctrncSeqNb>1</ElctrncSeqNb>',
    `      <CreDtTm>${isoSeconds(s.createdAt)}</CreDtTm>`,
    `      <FrToDt><FrDtTm>${isoSeconds(s.from)}</FrDtTm><ToDtTm>${isoSeconds(s.to)}</ToDtTm></FrToDt>`,
    `      <Acct><Id><IBAN>${esc(s.accountIban)}</IBAN></Id><Ccy>${esc(s.currency)}</Ccy><Ownr><Nm>${esc(s.accountOwner)}</Nm></Ownr></Acct>`,
    balance('OPBD', s.openingBalanceCents, s.currency, s.from),
    balance('CLBD', closingBalance(s), s.currency, s.to),
    ...entries,
    '    </Stmt>',
    '  </BkToCstmrStmt>',
    '</Document>',
    '',
  ].join('\n');
}
