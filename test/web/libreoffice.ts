import { execFile } from 'node:child_process';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { promisify } from 'node:util';
import { XMLParser } from 'fast-xml-parser';

const run = promisify(execFile);

/**
 * Opens a file in LibreOffice Calc headless, with its default import (or the given one), and saves
 * it in the format `to` names (an extension, e.g. 'xlsx'); a throwaway profile keeps runs
 * independent. Returns the written file's path.
 */
export async function convertWithCalc(file: string, outDir: string, to: string, infilter?: string): Promise<string> {
  const profile = await mkdtemp(path.join(tmpdir(), 'lo-profile-'));
  try {
    await run('soffice', [`-env:UserInstallation=${pathToFileURL(profile).href}`, '--headless', '--norestore', ...(infilter ? [`--infilter=${infilter}`] : []), '--convert-to', to, '--outdir', outDir, file], { timeout: 120_000 });
  } finally {
    await rm(profile, { recursive: true, force: true });
  }
  return path.join(outDir, `${path.parse(file).name}.${to}`);
}

/**
 * Saves a file as flat ODS (one XML file), which says for every cell whether Calc holds a number, a
 * date or text, and whether it is a formula.
 */
export async function convertToFods(file: string, outDir: string, infilter?: string): Promise<string> {
  return convertWithCalc(file, outDir, 'fods', infilter);
}

export interface CalcCell {
  type: string | undefined;
  value: string | undefined;
  text: string;
  formula: string | undefined;
}

const asArray = <T>(v: T | T[] | undefined): T[] => (v === undefined ? [] : Array.isArray(v) ? v : [v]);

function textOf(p: unknown): string {
  if (p === undefined || p === null) return '';
  if (typeof p === 'string' || typeof p === 'number') return String(p);
  if (Array.isArray(p)) return p.map(textOf).join('\n');
  if (typeof p === 'object') {
    const o = p as Record<string, unknown>;
    let out = '#text' in o ? String(o['#text']) : '';
    for (const [k, v] of Object.entries(o)) {
      if (k === 'text:s') out += ' '.repeat(Number((v as Record<string, unknown>)?.['@_text:c'] ?? 1));
      else if (k === 'text:span' || k === 'text:a') out += textOf(v);
    }
    return out;
  }
  return '';
}

/** The first sheet's rows (repeated rows and cells expanded, trailing empty ones dropped). */
export async function readFods(file: string): Promise<CalcCell[][]> {
  const parser = new XMLParser({ ignoreAttributes: false, preserveOrder: false, parseTagValue: false, trimValues: false });
  const doc = parser.parse(await readFile(file, 'utf8')) as Record<string, any>;
  const table = asArray(doc['office:document']['office:body']['office:spreadsheet']['table:table'])[0];
  const rows: CalcCell[][] = [];
  for (const row of asArray<Record<string, any>>(table['table:table-row'])) {
    const cells: CalcCell[] = [];
    for (const c of asArray<Record<string, any>>(row['table:table-cell'])) {
      const repeat = Math.min(Number(c['@_table:number-columns-repeated'] ?? 1), 100);
      for (let i = 0; i < repeat; i++) {
        cells.push({ type: c['@_office:value-type'], value: c['@_office:value'] ?? c['@_office:date-value'], text: textOf(c['text:p']), formula: c['@_table:formula'] });
      }
    }
    while (cells.length > 0 && cells.at(-1)!.type === undefined && cells.at(-1)!.text === '') cells.pop();
    if (cells.length === 0) continue;
    const repeat = Math.min(Number(row['@_table:number-rows-repeated'] ?? 1), 100_000);
    for (let i = 0; i < repeat; i++) rows.push(cells);
  }
  return rows;
}
