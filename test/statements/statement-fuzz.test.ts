import { fork } from 'node:child_process';
import { mkdtemp, readdir, readFile, rm, utimes, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadConfig } from '../../src/config/load.js';
import { Shutdown } from '../../src/lifecycle/shutdown.js';
import { silentLogger } from '../../src/log/logger.js';
import { importLimits, importStatement, type ImportResult } from '../../src/statements/import.js';
import { startStatementInbox } from '../../src/statements/inbox.js';
import { StatementFormatError, type Totals } from '../../src/statements/types.js';
import { cleanEnv, runCli } from '../e2e/cli.js';
import { useTestDatabase, type TestDatabase } from '../helpers/database.js';
import { testMetrics } from '../helpers/metrics.js';
import type { ChildMessage, ChildRequest } from './statement-fuzz-child.js';
import { equalTotals, fuzzCase, judgeParse, parsedTotals, reasonOf, showTotals, type Judgement } from './statement-fuzz-oracle.js';
import type { StatementFuzzCase } from './statement-fuzz-cases.js';

/**
 * Hostile statement files (statement-fuzz-cases.ts: valid CAMT.053, MT940 and CSV statements,
 * truncated, flipped, with fields removed or duplicated, wrong encodings, NUL, huge fields, deep
 * XML, entity tricks, impossible dates and amounts). 10,000 go through the parser in a process of
 * its own, each bounded by a watchdog; a few hundred more through the import into Postgres, the
 * `statement import` command and the daemon's inbox, which moves refused files to failed/ (three
 * in five of them files the parser accepts, which reach the ledger's tables). Every
 * file is read with its lines adding up to its own totals and balances, or refused with a
 * StatementFormatError naming the fault, and a refused import stores nothing
 * (statement-fuzz-oracle.ts says exactly what is checked).
 *
 * Reproducing: the seed is STMT_FUZZ_SEED (default 15) and case i is fuzzCase(seed, i) on its own;
 * the parser cases are 0..STMT_FUZZ_CASES-1 from STMT_FUZZ_FROM, the import's from 1,000,000, the
 * command's from 2,000,000, the inbox's from 3,000,000. A failure names seed, index and mutations.
 */
const SEED = Number(process.env.STMT_FUZZ_SEED ?? 15);
const FROM = Number(process.env.STMT_FUZZ_FROM ?? 0);
const PARSE_CASES = Number(process.env.STMT_FUZZ_CASES ?? 10_000);
const IMPORT_CASES = 300;
const CLI_CASES = 150;
const INBOX_CASES = 8;
const IMPORT_FROM = 1_000_000;
const CLI_FROM = 2_000_000;
const INBOX_FROM = 3_000_000;
/** no case may take this long: the watchdog kills the parser process and names the case */
const HANG_MS = 15_000;
/** nor this long and still be reported as fine: linear parsers read the largest case (0.7 MB) in 0.2 s */
const SLOW_MS = 3_000;

let db: TestDatabase;
useTestDatabase('statement_fuzz', (database) => (db = database));
let dir = '';
const limits = importLimits(loadConfig({}));
const caseName = (index: number) => `case ${index} of seed ${SEED}`;
const describeCase = (index: number, c: StatementFuzzCase) => `${caseName(index)} (${c.label}, ${c.bytes.length} bytes)`;

/**
 * Refusals the import adds to the parser's: what only the ledger can tell (the amount ceiling, an
 * account or SEPA reference longer than its indexes keep, a
 * statement imported before with other bookings). Not its check that the stored lines add up: for
 * a file the parser accepts, that failing would be a fault of the overlap rule, not of the file.
 */
const IMPORT_REFUSALS = /STATEMENT_MAX_AMOUNT_CENTS|a corrected statement under the same identity is refused|is longer than the \d+ characters a statement's/;

let parser: Promise<Extract<ChildMessage, { type: 'done' }>>;

/** The parser cases in a process of their own, watched: a case running past HANG_MS kills it. */
function runParserCases(): Promise<Extract<ChildMessage, { type: 'done' }>> {
  return new Promise((resolve, reject) => {
    const child = fork(fileURLToPath(new URL('./statement-fuzz-child.ts', import.meta.url)), [], { execArgv: ['--import', 'tsx'], stdio: ['ignore', 'ignore', 'pipe', 'ipc'] });
    let stderr = '';
    child.stderr?.on('data', (d: Buffer) => (stderr = (stderr + d.toString()).slice(-4000)));
    let at = FROM;
    let since = performance.now();
    let done: Extract<ChildMessage, { type: 'done' }> | undefined;
    let hung: Error | undefined;
    const watchdog = setInterval(() => {
      if (performance.now() - since < HANG_MS) return;
      const c = fuzzCase(SEED, at);
      hung = new Error(`${describeCase(at, c)} ran past ${HANG_MS} ms: the parser hangs on it (rerun alone: STMT_FUZZ_SEED=${SEED} STMT_FUZZ_FROM=${at} STMT_FUZZ_CASES=1)`);
      child.kill('SIGKILL');
    }, 250);
    child.on('message', (m: ChildMessage) => {
      if (m.type === 'at') {
        at = m.index;
        since = performance.now();
      } else done = m;
    });
    child.on('exit', (code, signal) => {
      clearInterval(watchdog);
      if (hung) reject(hung);
      else if (done) resolve(done);
      else reject(new Error(`the parser process died (${signal ?? `exit ${code}`}) at ${caseName(at)}: ${stderr.slice(-2000)}`));
    });
    child.send({ seed: SEED, from: FROM, count: PARSE_CASES } satisfies ChildRequest);
  });
}

beforeAll(async () => {
  dir = await mkdtemp(path.join(tmpdir(), 'bnpl-stmt-fuzz-'));
  // Started first and awaited last: the parser cases use one core while the database cases use the other.
  parser = runParserCases();
  parser.catch(() => undefined);
});
afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
});

const counts = async () =>
  (
    await db.sql<{ statements: number; lines: number; entries: number; periods: number }[]>`
      select (select count(*) from bank_statements)::int as statements, (select count(*) from statement_lines)::int as lines,
             (select count(*) from statement_entries)::int as entries, (select count(*) from statement_periods)::int as periods`
  )[0]!;

async function storedTotals(table: 'statement_entries' | 'statement_lines', statementId: number, onlyNew = false): Promise<Totals> {
  const rows = await db.sql<{ currency: string; direction: 'credit' | 'debit'; cents: string }[]>`
    select currency, direction::text as direction, sum(amount_cents)::text as cents from ${db.sql(table)}
    where statement_id = ${statementId} ${onlyNew ? db.sql`and match = 'new'` : db.sql``} group by 1, 2`;
  const t: Totals = new Map();
  for (const r of rows) {
    const v = t.get(r.currency) ?? { credit: 0n, debit: 0n };
    v[r.direction] += BigInt(r.cents);
    t.set(r.currency, v);
  }
  return t;
}

/** What an accepted file left in the ledger: one statement row, its lines and entries adding up to what the file holds. */
async function acceptedProblems(r: ImportResult, j: Judgement, before: Awaited<ReturnType<typeof counts>>): Promise<string[]> {
  const problems: string[] = [];
  const parsed = j.parsed!;
  if (r.linesRead !== parsed.lines.length || r.statements !== parsed.sections.length) problems.push(`import read ${r.linesRead} lines in ${r.statements} statements, the parser ${parsed.lines.length} in ${parsed.sections.length}`);
  if (r.linesNew + r.linesKnown + r.linesOverlap !== r.linesRead) problems.push(`lines new ${r.linesNew} + known ${r.linesKnown} + overlap ${r.linesOverlap} != read ${r.linesRead}`);
  if (r.alreadyImported) return problems;
  // The totals the import reports (the operator API's upload answers with them) are the file's own.
  const reported: Totals = new Map((r.totals ?? []).map((t) => [t.currency, { credit: BigInt(t.creditCents), debit: BigInt(t.debitCents) }]));
  if (!equalTotals(reported, parsedTotals(parsed))) problems.push(`the import reported totals ${showTotals(reported)}, the file's lines ${showTotals(parsedTotals(parsed))}`);
  const after = await counts();
  if (after.statements !== before.statements + 1) problems.push(`${after.statements - before.statements} statement rows added`);
  if (after.lines - before.lines !== r.linesNew) problems.push(`${after.lines - before.lines} lines stored, ${r.linesNew} reported new`);
  const lines = await storedTotals('statement_lines', r.statementId);
  const newEntries = await storedTotals('statement_entries', r.statementId, true);
  if (!equalTotals(lines, newEntries)) problems.push(`stored lines ${showTotals(lines)} differ from the new entries ${showTotals(newEntries)}`);
  // Entries the same statement had brought before are not recorded again; otherwise every entry of the file is.
  if (r.linesKnown === 0) {
    const entries = await storedTotals('statement_entries', r.statementId);
    if (!equalTotals(entries, parsedTotals(parsed))) problems.push(`stored entries ${showTotals(entries)}, the file's lines ${showTotals(parsedTotals(parsed))}`);
  }
  return problems;
}

function tally(into: Record<string, number>, key: string): void {
  into[key] = (into[key] ?? 0) + 1;
}
const top = (t: Record<string, number>, n: number) => {
  const sorted = Object.entries(t).sort((a, b) => b[1] - a[1]);
  const rest = sorted.slice(n).reduce((s, [, v]) => s + v, 0);
  return JSON.stringify(Object.fromEntries([...sorted.slice(0, n), ...(rest > 0 ? [[`(${sorted.length - n} other reasons)`, rest]] : [])]));
};

/**
 * `count` cases from `from` on, three in five of them files the parser accepts: only those reach
 * the ledger's tables, while in a plain sample three in four are refused before any row is written.
 */
function sample(from: number, count: number, acceptedShare = 0.6): { index: number; c: StatementFuzzCase; j: Judgement }[] {
  const picked: { index: number; c: StatementFuzzCase; j: Judgement }[] = [];
  const want = { accepted: Math.round(count * acceptedShare), refused: count - Math.round(count * acceptedShare) };
  for (let index = from; picked.length < count; index++) {
    const c = fuzzCase(SEED, index);
    const j = judgeParse(c);
    if (picked.filter((p) => p.j.outcome === j.outcome).length < want[j.outcome]) picked.push({ index, c, j });
  }
  return picked;
}

function withTimeout<T>(work: Promise<T>, ms: number, what: string): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  return Promise.race([work, new Promise<never>((_, reject) => (timer = setTimeout(() => reject(new Error(`${what} did not finish within ${ms} ms`)), ms)))]).finally(() => clearTimeout(timer));
}

describe('hostile statement files', () => {
  it(`through the import into Postgres (${IMPORT_CASES} cases): stored adding up, or refused as the parser refuses with nothing stored`, { timeout: 120_000 }, async () => {
    const outcomes: Record<string, number> = {};
    const problems: string[] = [];
    const started = performance.now();
    for (const { index, c, j } of sample(IMPORT_FROM, IMPORT_CASES)) {
      const before = await counts();
      const fail = (p: string) => problems.push(`${describeCase(index, c)}: ${p}`);
      try {
        const r = await withTimeout(importStatement(db, 'sandbox', c.bytes, `case-${index}.stmt`, limits), 30_000, 'the import');
        if (j.outcome === 'refused') fail(`imported what the parser refuses (${j.message.slice(0, 200)})`);
        else for (const p of await acceptedProblems(r, j, before)) fail(p);
        tally(outcomes, r.alreadyImported ? 'already imported' : 'imported');
      } catch (error) {
        const message = (error as Error).message;
        tally(outcomes, `refused: ${reasonOf(message)}`);
        if (!(error instanceof StatementFormatError)) fail(`${(error as Error).name} instead of StatementFormatError: ${message.slice(0, 300)}`);
        else if (j.outcome === 'refused' && message !== j.message) fail(`import refused with '${message.slice(0, 200)}', the parser with '${j.message.slice(0, 200)}'`);
        else if (j.outcome === 'accepted' && !IMPORT_REFUSALS.test(message)) fail(`import refused what the parser accepts: ${message.slice(0, 300)}`);
        const after = await counts();
        if (JSON.stringify(after) !== JSON.stringify(before)) fail(`a refused import left rows behind: ${JSON.stringify(before)} -> ${JSON.stringify(after)}`);
      }
    }
    console.info(`statement fuzz, import (seed ${SEED}): ${IMPORT_CASES} cases in ${Math.round(performance.now() - started)} ms: ${top(outcomes, 12)}`);
    expect(problems.slice(0, 20)).toEqual([]);
    expect(outcomes.imported ?? 0).toBeGreaterThan(IMPORT_CASES / 3);
  });

  it(`through \`bnpl-recon statement import\` (${CLI_CASES} files in one run): one result line per file, exit status 1, nothing stored of a refused file`, { timeout: 120_000 }, async () => {
    const files = sample(CLI_FROM, CLI_CASES).map((p) => ({ ...p, file: path.join(dir, `cli-${p.index}.stmt`) }));
    for (const f of files) await writeFile(f.file, f.c.bytes);
    const started = performance.now();
    const run = await runCli(['statement', 'import', ...files.map((f) => f.file)], cleanEnv({ DATABASE_URL: db.url, PROVIDER_ENV: 'sandbox', LOG_LEVEL: 'warn' }), 90_000);
    const ms = Math.round(performance.now() - started);
    const out = run.stdout.split('\n').filter((l) => l !== '');
    const problems: string[] = [];
    const outcomes: Record<string, number> = {};
    const refusedNames: string[] = [];
    for (const [k, f] of files.entries()) {
      const line = out[k] ?? '';
      const fail = (p: string) => problems.push(`${describeCase(f.index, f.c)}: ${p}`);
      if (!line.startsWith(`${f.file}: `)) {
        fail(`result line ${k + 1} is '${line.slice(0, 200)}'`);
        continue;
      }
      const failed = line.startsWith(`${f.file}: failed: `) ? line.slice(`${f.file}: failed: `.length) : null;
      tally(outcomes, failed === null ? (line.endsWith('(file already imported)') ? 'already imported' : 'imported') : `refused: ${reasonOf(failed)}`);
      if (failed === null && f.j.outcome === 'refused') fail(`imported what the parser refuses: ${line.slice(0, 200)}`);
      if (failed !== null) {
        refusedNames.push(path.basename(f.file));
        if (f.j.outcome === 'refused' && failed !== f.j.message) fail(`refused with '${failed.slice(0, 200)}', the parser with '${f.j.message.slice(0, 200)}'`);
        if (f.j.outcome === 'accepted' && !IMPORT_REFUSALS.test(failed)) fail(`refused what the parser accepts: ${failed.slice(0, 300)}`);
      }
      if (failed === null && f.j.outcome === 'accepted' && !line.includes(`lines read ${f.j.parsed!.lines.length},`)) fail(`'${line.slice(0, 200)}' for ${f.j.parsed!.lines.length} lines`);
    }
    console.info(`statement fuzz, statement import command (seed ${SEED}): ${CLI_CASES} files in one run of ${ms} ms, exit ${run.code}: ${top(outcomes, 8)}`);
    expect(problems.slice(0, 20)).toEqual([]);
    expect(out.at(-1)).toMatch(new RegExp(`^files ${CLI_CASES}: imported ${CLI_CASES - refusedNames.length}, failed ${refusedNames.length};`));
    expect(run.code).toBe(refusedNames.length > 0 ? 1 : 0);
    // Its own stderr: one line per refusal, and no log of an unexpected failure ('statement import failed') or a crash.
    const stderr = run.stderr.split('\n').filter((l) => l !== '');
    expect(stderr.filter((l) => !l.startsWith('bnpl-recon statement: ') && !(l.startsWith('{') && Number((JSON.parse(l) as { level: number }).level) < 50))).toEqual([]);
    expect(stderr.filter((l) => l.startsWith('bnpl-recon statement: '))).toHaveLength(refusedNames.length);
    const [stored] = await db.sql<{ n: number }[]>`select count(*)::int as n from bank_statements where file_name = any(${refusedNames}::text[])`;
    expect(stored?.n).toBe(0);
  });

  it(`through the daemon's inbox, each import in its own process (${INBOX_CASES} files): imported/, or failed/ with the reason, nothing stored of it`, { timeout: 120_000 }, async () => {
    // Half the parser accepts, half it refuses, so both of the inbox's ways out are taken.
    const picked = sample(INBOX_FROM, INBOX_CASES, 0.5);
    const config = loadConfig({ RECON_DATA_DIR: path.join(dir, 'daemon'), PROVIDER_ENV: 'sandbox', DATABASE_URL: db.url, STATEMENT_IMPORT_TIMEOUT_SECONDS: '60' });
    const shutdown = new Shutdown(silentLogger(), 5000);
    const inbox = startStatementInbox({ config, log: silentLogger(), database: db, shutdown, ...testMetrics(db) }, { intervalMs: 3_600_000, settleMs: 1 });
    const started = performance.now();
    try {
      await inbox.runNow();
      const old = new Date(Date.now() - 60_000);
      for (const p of picked) {
        const file = path.join(inbox.dir, `inbox-${p.index}.stmt`);
        await writeFile(file, p.c.bytes);
        await utimes(file, old, old);
      }
      const result = await inbox.runNow();
      const ms = Math.round(performance.now() - started);
      const problems: string[] = [];
      const imported = new Set(await readdir(path.join(inbox.dir, 'imported')));
      const failedDir = new Set(await readdir(path.join(inbox.dir, 'failed')));
      for (const p of picked) {
        const name = `inbox-${p.index}.stmt`;
        const fail = (m: string) => problems.push(`${describeCase(p.index, p.c)}: ${m}`);
        const failed = result.failed.find((f) => f.file === name);
        if (failed) {
          if (!failedDir.has(name) || !failedDir.has(`${name}.error`)) fail('refused but not moved to failed/ with its .error');
          else if ((await readFile(path.join(inbox.dir, 'failed', `${name}.error`), 'utf8')) !== `${failed.error}\n`) fail('.error does not hold the reason');
          if (p.j.outcome === 'refused' && failed.error !== p.j.message) fail(`refused with '${failed.error.slice(0, 200)}', the parser with '${p.j.message.slice(0, 200)}'`);
          if (p.j.outcome === 'accepted' && !IMPORT_REFUSALS.test(failed.error)) fail(`refused what the parser accepts: ${failed.error.slice(0, 300)}`);
        } else if (result.imported.some((r) => r.file === name)) {
          if (!imported.has(name)) fail('imported but not moved to imported/');
          if (p.j.outcome === 'refused') fail(`imported what the parser refuses (${p.j.message.slice(0, 200)})`);
        } else fail(`neither imported nor failed (deferred: ${result.deferred.join(', ')})`);
      }
      const refused = result.failed.map((f) => f.file);
      const [stored] = await db.sql<{ n: number }[]>`select count(*)::int as n from bank_statements where file_name = any(${refused}::text[])`;
      const reasons: Record<string, number> = {};
      for (const f of result.failed) tally(reasons, reasonOf(f.error));
      console.info(`statement fuzz, inbox (seed ${SEED}): ${INBOX_CASES} files in ${ms} ms: imported ${result.imported.length}, moved to failed/ ${refused.length} ${top(reasons, 8)}`);
      expect(problems).toEqual([]);
      expect(result.deferred).toEqual([]);
      expect(stored?.n).toBe(0);
    } finally {
      await shutdown.run('test');
    }
  });

  it(`through the parser (${PARSE_CASES} cases, each bounded): lines adding up to the file's totals and balances, or a StatementFormatError naming the fault`, { timeout: 180_000 }, async () => {
    const done = await parser;
    const accepted = Object.fromEntries(Object.entries(done.tally).map(([format, t]) => [format, t.accepted ?? 0]));
    const refusedBy: Record<string, number> = {};
    for (const t of Object.values(done.tally)) for (const [k, v] of Object.entries(t)) if (k !== 'accepted') refusedBy[k.slice('refused: '.length)] = (refusedBy[k.slice('refused: '.length)] ?? 0) + v;
    const refused = Object.values(refusedBy).reduce((a, b) => a + b, 0);
    const slowest = done.slowest[0];
    console.info(
      `statement fuzz, parser (seed ${SEED}, cases ${FROM}..${FROM + PARSE_CASES - 1}): ${done.cases} cases in ${Math.round(done.ms)} ms; accepted ${JSON.stringify(accepted)}, ` +
        `refused ${refused}; ${done.redressed} re-dressed statements read as written, ${done.entityTricks} entity tricks; slowest ${slowest ? `${Math.round(slowest.ms)} ms (${caseName(slowest.index)}, ${slowest.label}, ${slowest.bytes} bytes)` : '-'}`,
    );
    console.info(`statement fuzz, parser refusals by reason: ${top(refusedBy, 30)}`);
    expect(done.problems.map((p) => `${caseName(p.index)} (${p.label}): ${p.problems.join(' | ')}; starts ${p.head}`)).toEqual([]);
    expect(done.slowest.filter((s) => s.ms > SLOW_MS).map((s) => `${caseName(s.index)} (${s.label}) took ${Math.round(s.ms)} ms`)).toEqual([]);
    expect(done.cases).toBe(PARSE_CASES);
    // Every kind of outcome is exercised, not only refusals at the door (not asked of a rerun of a few cases).
    if (PARSE_CASES >= 1000) {
      expect(Object.values(accepted).every((n) => n > PARSE_CASES / 20)).toBe(true);
      expect(done.redressed).toBeGreaterThan(PARSE_CASES / 40);
      expect(done.entityTricks).toBeGreaterThan(PARSE_CASES / 500);
    }
  });
});
