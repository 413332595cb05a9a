import { execFile } from 'node:child_process';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { promisify } from 'node:util';
import { describe, expect, it } from 'vitest';

/**
 * Every command the README and docs/ show must run as written: each `bnpl-recon COMMAND [SUB]`
 * they name answers its --help with exit 0 (so a renamed or removed command fails here), each
 * `npm run SCRIPT` is a script of package.json, and each path of this repository they name exists.
 */
const ROOT = path.resolve(import.meta.dirname, '../..');
const DOCS = ['README.md', 'ARCHITECTURE.md', ...readdirSync(path.join(ROOT, 'docs')).filter((f) => f.endsWith('.md')).map((f) => `docs/${f}`)];
const text = (file: string) => readFileSync(path.join(ROOT, file), 'utf8');

/** Code: fenced blocks and inline spans, where a reader copies commands from. */
function codeOf(markdown: string): string[] {
  return [...fencedOf(markdown), ...inlineOf(markdown)];
}
const fencedOf = (markdown: string) => [...markdown.matchAll(/```[a-z]*\n([\s\S]*?)```/g)].map((m) => m[1]!);
const inlineOf = (markdown: string) => [...markdown.replace(/```[a-z]*\n[\s\S]*?```/g, '').matchAll(/`([^`\n]+)`/g)].map((m) => m[1]!);

const TOP = ['start', 'demo', 'migrate', 'poll', 'reconcile', 'statement', 'payout-report', 'report', 'discrepancy', 'webhooks', 'ledger', 'sim'];
const WITH_SUB: Record<string, string[]> = {
  statement: ['import'], 'payout-report': ['import'], report: ['discrepancies', 'orders', 'payouts', 'deliveries', 'invoices'],
  discrepancy: ['ack'], webhooks: ['register', 'keys'], ledger: ['reparse'],
};

/** `bnpl-recon report invoices --ageing` -> ['report', 'invoices']; commands the docs show, as the CLI would dispatch them. */
function commandsIn(code: string): string[][] {
  const out: string[][] = [];
  // How the docs invoke it: npx, the launcher (bin/bnpl-recon.js, /opt/bnpl-recon/bin/...), the
  // container image (bnpl-recon:0.1.0 migrate), or the installed name at the start of a line.
  const invocation = /(?:npx bnpl-recon|bin\/bnpl-recon\.js|bnpl-recon:[\w.]+|^[ \t]*bnpl-recon) +([a-z][a-z-]*)(?: +([a-z][a-z-]*))?/gm;
  for (const m of code.matchAll(invocation)) {
    const [command, sub] = [m[1]!, m[2]];
    if (!TOP.includes(command)) {
      out.push([command]);
      continue;
    }
    out.push(WITH_SUB[command] && sub !== undefined && WITH_SUB[command]!.includes(sub) ? [command, sub] : WITH_SUB[command] ? [command, sub ?? ''] : [command]);
  }
  return out;
}

const run = promisify(execFile);

describe('the commands the README and docs/ show', () => {
  const shown = new Map<string, string>();
  for (const file of DOCS) {
    for (const code of fencedOf(text(file))) for (const c of commandsIn(code)) shown.set(c.join(' ').trim(), file);
    // Inline, `bnpl-recon X` may also be prose naming a log line (`bnpl-recon running`): only the
    // known commands count there, and their subcommands must still exist.
    for (const code of inlineOf(text(file))) for (const c of commandsIn(code)) if (TOP.includes(c[0]!)) shown.set(c.join(' ').trim(), file);
  }

  it('finds the commands of the README\'s tour', () => {
    expect([...shown.keys()]).toEqual(expect.arrayContaining(['demo', 'report discrepancies', 'report payouts', 'statement import', 'start']));
  });

  it('names only commands that exist: each answers --help with exit 0', async () => {
    const failures: string[] = [];
    for (const [command, file] of shown) {
      try {
        const { stdout } = await run(process.execPath, ['bin/bnpl-recon.js', ...command.split(' ').filter(Boolean), '--help'], { cwd: ROOT });
        if (!stdout.includes('Usage')) failures.push(`${file}: bnpl-recon ${command}: --help printed no usage`);
      } catch (error) {
        failures.push(`${file}: bnpl-recon ${command}: ${(error as Error).message.split('\n')[0]}`);
      }
    }
    expect(failures).toEqual([]);
  }, 120_000);

  it('names only npm scripts package.json has', () => {
    const scripts = Object.keys((JSON.parse(text('package.json')) as { scripts: Record<string, string> }).scripts);
    const missing = DOCS.flatMap((file) => codeOf(text(file)).flatMap((code) => [...code.matchAll(/npm run ([a-z:-]+)/g)].map((m) => m[1]!).filter((s) => !scripts.includes(s)).map((s) => `${file}: npm run ${s}`)));
    expect(missing).toEqual([]);
  });

  it('names only files and folders of this repository that exist', () => {
    const missing = DOCS.flatMap((file) =>
      codeOf(text(file)).flatMap((code) =>
        [...code.matchAll(/(?:^|[\s(])((?:ops|docs|src|test|bench|sim|web|migrations|dist|bin)\/[A-Za-z0-9_./-]*[A-Za-z0-9_/-])/g)]
          .map((m) => m[1]!.replace(/\/$/, ''))
          .filter((p) => !p.includes('*') && !existsSync(path.join(ROOT, p)))
          .map((p) => `${file}: ${p}`),
      ),
    );
    expect(missing).toEqual([]);
  });
});
