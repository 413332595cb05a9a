import { spawnSync } from 'node:child_process';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ConfigError, loadConfig } from '../../src/config/load.js';
import { cleanEnv, REPO_ROOT } from '../e2e/cli.js';

/** CONTRACT_TERMS and PAYOUT_REPORT_COLUMNS, validated when the configuration is read at start. */
const TERMS = '{"currency":"EUR","mdr":[{"payment_method":"bank_transfer","percent":"2.9"},{"percent":"3.0"}],"fixed_fee_cents":30,"vat_percent":"19"}';

function refusal(env: Record<string, string>): ConfigError {
  try {
    loadConfig(env);
  } catch (error) {
    if (error instanceof ConfigError) return error;
    throw error;
  }
  throw new Error(`accepted ${JSON.stringify(env)}`);
}

describe('CONTRACT_TERMS', () => {
  let dir: string;
  beforeAll(async () => {
    dir = await mkdtemp(path.join(tmpdir(), 'contract-terms-'));
  });
  afterAll(async () => {
    await rm(dir, { recursive: true, force: true });
  });

  it('is unset by default (deductions reported, not judged), inline JSON, or a JSON file', async () => {
    expect(loadConfig({}).CONTRACT_TERMS).toBeUndefined();
    const inline = loadConfig({ CONTRACT_TERMS: TERMS }).CONTRACT_TERMS;
    expect(inline).toMatchObject({ currency: 'EUR', fixedFeeCents: 30n, vatRateMicros: 190000, mdr: [{ paymentMethod: 'bank_transfer', rateMicros: 29000 }, { paymentMethod: null, rateMicros: 30000 }] });
    const file = path.join(dir, 'terms.json');
    await writeFile(file, TERMS);
    expect(loadConfig({ CONTRACT_TERMS: file }).CONTRACT_TERMS).toEqual(inline);
  });

  it('refuses a missing file, bad JSON and a bad field, naming CONTRACT_TERMS and the field', async () => {
    const missing = refusal({ CONTRACT_TERMS: path.join(dir, 'nope.json') });
    expect(missing.setting).toBe('CONTRACT_TERMS');
    expect(missing.message).toBe(`invalid setting CONTRACT_TERMS: cannot read the file ${path.join(dir, 'nope.json')}: ENOENT`);
    expect(refusal({ CONTRACT_TERMS: '{"mdr":' }).message).toMatch(/^invalid setting CONTRACT_TERMS: not JSON: /);
    const bad = path.join(dir, 'bad.json');
    await writeFile(bad, TERMS.replace('"19"', '"19.00001"'));
    expect(refusal({ CONTRACT_TERMS: bad }).message).toBe(`invalid setting CONTRACT_TERMS: ${bad}: vat_percent: "19.00001" has more than 4 decimals (a percent: "2.9" is 2.9 %)`);
  });

  it('stops a command with exit status 2 and the reason on stderr', () => {
    const run = spawnSync(process.execPath, ['--import', 'tsx', 'src/cli.ts', 'migrate'], {
      cwd: REPO_ROOT,
      env: cleanEnv({ CONTRACT_TERMS: '{"mdr":[{"percent":"2.9"}],"fixed_fee_cents":-1,"vat_percent":"19"}' }),
      encoding: 'utf8',
    });
    expect(run.status).toBe(2);
    expect(run.stderr).toMatch(/invalid setting CONTRACT_TERMS: fixed_fee_cents: /);
  });
});

describe('PAYOUT_REPORT_COLUMNS', () => {
  it('is an empty map by default, or a JSON object to documented column names', () => {
    expect(loadConfig({}).PAYOUT_REPORT_COLUMNS).toEqual({});
    expect(loadConfig({ PAYOUT_REPORT_COLUMNS: '{"Belegnummer":"Doc No","Auszahlung":"transfer_amount"}' }).PAYOUT_REPORT_COLUMNS).toEqual({ Belegnummer: 'Doc No', Auszahlung: 'transfer_amount' });
  });

  it.each([
    ['Doc No', /not a JSON object/],
    ['["Doc No"]', /not a JSON object/],
    ['{"Beleg":"Document"}', /maps "Beleg" to "Document", which is no documented payout report column/],
    ['{"Beleg":7}', /maps "Beleg" to 7/],
  ])('refuses %s naming PAYOUT_REPORT_COLUMNS', (value, message) => {
    const error = refusal({ PAYOUT_REPORT_COLUMNS: value });
    expect(error.setting).toBe('PAYOUT_REPORT_COLUMNS');
    expect(error.message).toMatch(message);
  });
});
