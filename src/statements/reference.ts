/**
 * The reference a payout is matched on. The provider sends it as the payout's sepa_instruction_id;
 * on the statement it travels as the SEPA end-to-end id (CAMT Refs/EndToEndId, MT940 EREF+, the CSV
 * end_to_end_reference), some banks show only the instruction id (Refs/InstrId), and some pass only
 * the remittance text ("Auszahlung PO2026…"). Taken in that order; 'NOTPROVIDED' (the SEPA filler
 * for "none") counts as absent. Stored upper-case: MT940's SWIFT character set and many banks upper-case
 * references, so the CAMT and MT940 copies of one line must agree. From the remittance we take the first token that looks like an
 * instruction id: 12-35 letters and digits, starting with a letter, with at least 8 digits (so words
 * and short invoice numbers such as "Rechnung 123456" are not mistaken for one).
 */
export function sepaReferenceOf(fields: { endToEndId: string | null; instructionId: string | null; remittance: string | null }): string | null {
  const e2e = present(fields.endToEndId);
  if (e2e) return e2e.toUpperCase();
  const instr = present(fields.instructionId);
  if (instr) return instr.toUpperCase();
  for (const token of (fields.remittance ?? '').split(/[\s,;:/()]+/)) {
    if (/^[A-Za-z][A-Za-z0-9]{11,34}$/.test(token) && (token.match(/\d/g)?.length ?? 0) >= 8) return token.toUpperCase();
  }
  return null;
}

/** Trimmed, or null when empty or the SEPA filler NOTPROVIDED. */
export function present(value: string | null | undefined): string | null {
  const v = value?.trim();
  if (!v || v.toUpperCase() === 'NOTPROVIDED') return null;
  return v;
}

/** IBANs compared without spaces and in upper case, as printed ones often are grouped by four. */
export function normalizeIban(value: string | null | undefined): string | null {
  const v = value?.replace(/\s+/g, '').toUpperCase();
  return v ? v : null;
}
