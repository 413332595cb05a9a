import type { Prng } from './prng.js';
import type { BankAccount, BuyerRecord } from './payloads.js';

const COMPANY_STEMS = ['Nordlicht', 'Havel', 'Brandt', 'Isar', 'Kessler', 'Lindner', 'Moser', 'Rhein', 'Sommer', 'Vogel', 'Weber', 'Alpen', 'Elbe', 'Falk', 'Garten'];
const COMPANY_TRADES = ['Maschinenbau', 'Logistik', 'Handel', 'Bürobedarf', 'Elektro', 'Feinkost', 'Druck', 'Textil', 'Holzbau', 'Medien'];
const LEGAL_FORMS = ['GmbH', 'GmbH & Co. KG', 'AG', 'UG', 'KG', 'e.K.'];
const FIRST = ['Anna', 'Ben', 'Clara', 'David', 'Eva', 'Felix', 'Greta', 'Hannes', 'Ida', 'Jonas', 'Lena', 'Moritz', 'Nina', 'Paul', 'Sophie'];
const LAST = ['Becker', 'Fischer', 'Hoffmann', 'Klein', 'Koch', 'Meyer', 'Müller', 'Neumann', 'Richter', 'Schmidt', 'Schulz', 'Wagner', 'Wolf', 'Zimmermann'];
const CITIES: [string, string][] = [
  ['Berlin', '10115'],
  ['Hamburg', '20095'],
  ['München', '80331'],
  ['Köln', '50667'],
  ['Leipzig', '04109'],
  ['Stuttgart', '70173'],
];
const STREETS = ['Hauptstraße', 'Bahnhofstraße', 'Industriestraße', 'Gartenweg', 'Marktplatz', 'Hafenstraße'];
const BANKS: [string, string, string][] = [
  ['Sparkasse', 'Berliner Sparkasse', 'BELADEBEXXX'],
  ['Commerzbank', 'Commerzbank AG', 'COBADEFFXXX'],
  ['Deutsche Bank', 'Deutsche Bank AG', 'DEUTDEFFXXX'],
  ['GLS Bank', 'GLS Gemeinschaftsbank eG', 'GENODEM1GLS'],
];

/** A German IBAN with correct ISO 7064 mod-97 check digits, drawn from the stream. */
export function germanIban(rng: Prng): string {
  const bban = `${rng.digits(8)}${rng.digits(10)}`;
  return ibanWithCheck('DE', bban);
}

export function ibanWithCheck(country: string, bban: string): string {
  const rearranged = `${bban}${country}00`
    .split('')
    .map((c) => (/[A-Z]/.test(c) ? String(c.charCodeAt(0) - 55) : c))
    .join('');
  let remainder = 0;
  for (const digit of rearranged) remainder = (remainder * 10 + Number(digit)) % 97;
  return `${country}${String(98 - remainder).padStart(2, '0')}${bban}`;
}

export function newBuyer(rng: Prng, externalReferenceId: string): BuyerRecord {
  const [city, zip] = rng.pick(CITIES);
  const firstName = rng.pick(FIRST);
  const lastName = rng.pick(LAST);
  const companyName = `${rng.pick(COMPANY_STEMS)} ${rng.pick(COMPANY_TRADES)}`;
  return {
    uuid: rng.uuid(),
    externalReferenceId,
    companyName,
    legalForm: rng.pick(LEGAL_FORMS),
    firstName,
    lastName,
    email: `${firstName.toLowerCase()}.${lastName.toLowerCase().replace('ü', 'ue')}@example.com`,
    phone: `+49${rng.digits(10)}`,
    address: {
      country_code: 'DE',
      city,
      zip_code: zip,
      address_line1: `${rng.pick(STREETS)} ${rng.int(1, 120)}`,
      address_line2: rng.chance(0.3) ? `Etage ${rng.int(1, 5)}` : '',
    },
  };
}

export function bankAccountFor(rng: Prng, holder: string): BankAccount {
  const [bank, bankName, bic] = rng.pick(BANKS);
  return { account_holder: holder, bank, bank_name: bankName, bic, iban: germanIban(rng) };
}

export function personName(rng: Prng): { firstName: string; lastName: string } {
  return { firstName: rng.pick(FIRST), lastName: rng.pick(LAST) };
}

export const UNRELATED_CREDITORS = ['Stadtwerke', 'Bürovermietung Nord', 'Telekom Geschäftskunden', 'Lohnbuchhaltung', 'Spedition Weber'];
export const UNRELATED_PAYERS = ['Kunde Direktzahlung', 'Finanzamt Erstattung', 'Versicherung AG', 'Marktplatz Auszahlung'];
