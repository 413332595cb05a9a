import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DEFAULT_FAULT_RATES } from '../../sim/options.js';
import { startSimulator, type Simulator } from '../../sim/simulator.js';
import { DAY_MS } from '../../sim/time.js';

/**
 * Every IBAN the simulator writes is a real one for its country: a buyer who pays the merchant
 * directly pays from an account in the buyer's own country (registered_address.country_code), and
 * every IBAN in a payload or a statement has its country's length and ISO 7064 mod-97 check digits.
 * Written from ISO 13616, independently of sim/parties.ts.
 */
const IBAN_LENGTH: Record<string, number> = { DE: 22, AT: 20, FR: 27, NL: 18, GB: 22 };

function mod97(iban: string): number {
  const digits = `${iban.slice(4)}${iban.slice(0, 4)}`.replace(/[A-Z]/g, (c) => String(c.charCodeAt(0) - 55));
  let remainder = 0;
  for (const d of digits) remainder = (remainder * 10 + Number(d)) % 97;
  return remainder;
}

function problem(iban: string): string | undefined {
  const country = iban.slice(0, 2);
  if (!/^[A-Z]{2}\d{2}[A-Z0-9]+$/.test(iban)) return 'not an IBAN';
  if (iban.length !== IBAN_LENGTH[country]) return `${iban.length} characters, ${country} has ${IBAN_LENGTH[country] ?? 'no known length'}`;
  return mod97(iban) === 1 ? undefined : 'check digits wrong (mod 97 is not 1)';
}

/** RFC 4180 rows, as the simulator's CSV statements write them. */
function csvRows(text: string): string[][] {
  const rows: string[][] = [];
  for (const line of text.split('\r\n').filter((l) => l !== '')) {
    const cells: string[] = [];
    for (const m of line.matchAll(/(?:^|,)("(?:[^"]|"")*"|[^,]*)/g)) {
      const cell = m[1] ?? '';
      cells.push(cell.startsWith('"') ? cell.slice(1, -1).replace(/""/g, '"') : cell);
    }
    rows.push(cells);
  }
  return rows;
}

let sim: Simulator;
let dir: string;

beforeAll(async () => {
  sim = await startSimulator({ seed: 'buyer-ibans', faults: { ...DEFAULT_FAULT_RATES, buyerPaidDirectly: 0.2 }, business: { ordersPerDay: 60, newBuyersPerDay: 8 } });
  await sim.advance(14 * DAY_MS);
  dir = await mkdtemp(path.join(tmpdir(), 'buyer-ibans-'));
});
afterAll(async () => {
  await sim.stop();
  if (dir) await rm(dir, { recursive: true, force: true });
});

describe("the simulator's bank accounts", () => {
  it("a buyer paying the merchant directly pays from an IBAN of the buyer's country, with valid check digits", async () => {
    // Buyers by company name and legal form (the statement line's counterparty) with their country.
    const countryOf = new Map<string, string>();
    for (const d of sim.plannedDeliveries()) {
      const body = JSON.parse(d.body.toString('utf8')) as { applicant?: { buyer?: { company_name?: string; registered_address?: { country_code?: string } } } };
      const buyer = body.applicant?.buyer;
      if (buyer?.company_name && buyer.registered_address?.country_code) countryOf.set(buyer.company_name, buyer.registered_address.country_code);
    }
    expect(countryOf.size).toBeGreaterThan(0);
    let checked = 0;
    for (const file of (await sim.writeStatements(dir)).filter((f) => f.endsWith('.csv'))) {
      const [head, ...rows] = csvRows(await readFile(file, 'utf8'));
      const col = (name: string) => head!.indexOf(name);
      for (const row of rows) {
        const payer = row[col('counterparty_name')] ?? '';
        const iban = row[col('counterparty_iban')] ?? '';
        // A buyer's direct payment names the buyer as company and legal form ("Havel Logistik GmbH").
        const company = [...countryOf.keys()].find((c) => payer.startsWith(`${c} `));
        if (company === undefined || row[col('credit_debit')] !== 'CRDT') continue;
        checked += 1;
        expect({ payer, iban, country: iban.slice(0, 2), problem: problem(iban) }).toEqual({ payer, iban, country: countryOf.get(company), problem: undefined });
      }
    }
    expect(checked, 'no direct payment by a buyer in the statements').toBeGreaterThan(0);
  });

  it('every IBAN in a payload or a statement has its country\'s length and valid check digits', async () => {
    const ibans = new Set<string>();
    const collect = (value: unknown): void => {
      if (!value || typeof value !== 'object') return;
      for (const [key, v] of Object.entries(value)) {
        if (key === 'iban' && typeof v === 'string') ibans.add(v);
        else collect(v);
      }
    };
    for (const d of sim.plannedDeliveries()) collect(JSON.parse(d.body.toString('utf8')));
    for (const file of (await sim.writeStatements(dir)).filter((f) => f.endsWith('.csv'))) {
      const [head, ...rows] = csvRows(await readFile(file, 'utf8'));
      for (const row of rows) for (const name of ['counterparty_iban', 'account_iban']) ibans.add(row[head!.indexOf(name)] ?? '');
    }
    ibans.add(sim.bank.sandbox.merchantIban).add(sim.bank.sandbox.providerIban).add(sim.bank.production.merchantIban).add(sim.bank.production.providerIban);
    expect(ibans.size).toBeGreaterThan(10);
    expect([...ibans].map((iban) => ({ iban, problem: problem(iban) })).filter((i) => i.problem !== undefined)).toEqual([]);
  });
});
