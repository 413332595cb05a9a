import { readFile } from 'node:fs/promises';
import type { CsvOptions } from './csv.js';
import { parseCsvProfile } from './csv-profile.js';
import { decodeStatement } from './decode.js';

/**
 * What CSV imports take from the settings: the user's profile file (`file`, from `statement import
 * --profile`, else STATEMENT_CSV_PROFILE) and the accounts' currencies. A profile file that cannot
 * be read or is not a profile is an Error naming the file and what is wrong. The file is decoded as
 * statement files are (decode.ts): a byte order mark dropped (Notepad and Excel save UTF-8 with
 * one), UTF-16 with its BOM read as such, text not valid UTF-8 read as Windows-1252.
 */
export async function csvSettings(
  config: { STATEMENT_CSV_PROFILE?: string | undefined; STATEMENT_ACCOUNT_CURRENCIES: Record<string, string> },
  file: string | undefined = config.STATEMENT_CSV_PROFILE,
): Promise<CsvOptions> {
  const options: CsvOptions = { accountCurrencies: config.STATEMENT_ACCOUNT_CURRENCIES };
  if (file === undefined) return options;
  let text: string;
  try {
    text = decodeStatement(await readFile(file));
  } catch (error) {
    throw new Error(`CSV profile ${file}: unreadable: ${(error as Error).message}`);
  }
  return { ...options, profiles: [parseCsvProfile(text, `CSV profile ${file}`)] };
}
