import { spawnSync } from 'node:child_process';
import { chmodSync, copyFileSync, cpSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, writeFileSync, lstatSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { describe, expect, it } from 'vitest';

/**
 * The systemd files, judged by systemd's own tools (Debian package `systemd`; CI installs it):
 * `systemd-analyze verify` of the unit as shipped, inside a throw-away root that holds the install
 * layout (/opt/bnpl-recon/bin) and the stock targets, so nothing in the unit is rewritten for the test;
 * `systemd-analyze security --offline=true` for the hardening score; `systemd-sysusers --dry-run`
 * for the user entry.
 */

const has = (tool: string) => spawnSync('sh', ['-c', `command -v ${tool}`]).status === 0;
const unitFile = path.resolve('ops/systemd/bnpl-recon.service');
const sysusersFile = path.resolve('ops/systemd/bnpl-recon.sysusers');
const STOCK_UNITS = '/usr/lib/systemd/system';

/** A root with the unit installed, the stock targets (regular files only) and, unless told not to, the launcher. */
function installRoot(unitText: string, withLauncher = true): string {
  const root = mkdtempSync(path.join(tmpdir(), 'unit-root-'));
  const units = path.join(root, 'usr/lib/systemd/system');
  mkdirSync(units, { recursive: true });
  for (const name of readdirSync(STOCK_UNITS)) {
    const from = path.join(STOCK_UNITS, name);
    if (name.endsWith('.target') && lstatSync(from).isFile()) copyFileSync(from, path.join(units, name));
  }
  mkdirSync(path.join(root, 'etc/systemd/system'), { recursive: true });
  writeFileSync(path.join(root, 'etc/systemd/system/bnpl-recon.service'), unitText);
  if (withLauncher) {
    cpSync(path.resolve('bin'), path.join(root, 'opt/bnpl-recon/bin'), { recursive: true });
    chmodSync(path.join(root, 'opt/bnpl-recon/bin/bnpl-recon.js'), 0o755);
  }
  return root;
}

function verify(root: string) {
  return spawnSync('systemd-analyze', ['verify', `--root=${root}`, '/etc/systemd/system/bnpl-recon.service'], { encoding: 'utf8' });
}

function exposure(file: string, threshold: number) {
  const result = spawnSync('systemd-analyze', ['security', '--offline=true', `--threshold=${threshold}`, '--no-pager', file], { encoding: 'utf8' });
  const score = /Overall exposure level for [^:]+: ([0-9.]+)/.exec(result.stdout)?.[1];
  return { status: result.status, score: score === undefined ? undefined : Number(score), output: result.stdout + result.stderr };
}

describe.skipIf(!has('systemd-analyze'))('systemd unit', () => {
  const text = readFileSync(unitFile, 'utf8');

  it('verifies as installed, and not when its ExecStart is missing', () => {
    const ok = verify(installRoot(text));
    expect(ok.stderr).not.toMatch(/bnpl-recon\.service:/);
    expect(ok.status).toBe(0);
    const missing = verify(installRoot(text, false));
    expect(missing.stderr).toMatch(/bnpl-recon\.js is not executable/);
    expect(missing.status).not.toBe(0);
  });

  it('scores an exposure of at most 2.0 offline; the same unit without its hardening does not', () => {
    // --threshold is in tenths: 20 means 2.0; above it the command fails.
    const hardened = exposure(unitFile, 20);
    expect(hardened.status, hardened.output).toBe(0);
    expect(hardened.score).toBeLessThanOrEqual(2.0);
    const dir = mkdtempSync(path.join(tmpdir(), 'unit-'));
    const bare = path.join(dir, 'bnpl-recon.service');
    const [head] = text.split('# Hardening:');
    writeFileSync(bare, `${head}\n[Install]\nWantedBy=multi-user.target\n`);
    const unhardened = exposure(bare, 20);
    expect(unhardened.score).toBeGreaterThan(2.0);
    expect(unhardened.status).not.toBe(0);
  });

  it('lets the statement import run at niceness 10 (setpriority allowed), and nothing else of @resources or @privileged', () => {
    // src/statements/isolated-import.ts lowers the import's priority with os.setPriority (setpriority(2)).
    expect(readFileSync('src/statements/isolated-import.ts', 'utf8')).toMatch(/setPriority\(pid, niceness\)/);
    // systemd's own reading of the merged filter lines.
    const report = exposure(unitFile, 20).output;
    expect(report).toMatch(/SystemCallFilter=~@resources .*e\.g\. setpriority is allowed/);
    expect(report).toMatch(/SystemCallFilter=~@privileged .*is not included/);
    // The effective set, by systemd.exec(5): the first SystemCallFilter= line decides allow or deny
    // list; later lines edit it in order (on an allow list, `~` removes, a plain line adds).
    const expand = (item: string): string[] =>
      item.startsWith('@')
        ? spawnSync('systemd-analyze', ['syscall-filter', item], { encoding: 'utf8' }).stdout.split('\n').filter((l) => /^\s+@?[a-z_0-9]+$/.test(l)).map((l) => l.trim()).flatMap(expand)
        : [item];
    const lines = [...text.matchAll(/^SystemCallFilter=(.*)$/gm)].map((m) => m[1]!.trim());
    expect(lines[0]!.startsWith('~'), 'an allow list first').toBe(false);
    const allowed = new Set<string>();
    for (const line of lines) {
      const deny = line.startsWith('~');
      for (const item of line.replace(/^~/, '').split(/\s+/)) for (const call of expand(item)) deny ? allowed.delete(call) : allowed.add(call);
    }
    expect(allowed.size).toBeGreaterThan(100);
    expect(allowed.has('setpriority'), 'setpriority allowed').toBe(true);
    const loosened = [...expand('@resources'), ...expand('@privileged')].filter((call) => allowed.has(call));
    expect(loosened).toEqual(['setpriority']);
  });

  it('does not hard-code a node binary; the launcher refuses a Node older than package.json engines', () => {
    const execStart = /^ExecStart=(\S+)/m.exec(text)?.[1];
    expect(execStart).toBe('/opt/bnpl-recon/bin/bnpl-recon.js');
    expect(text).not.toMatch(/^ExecStart=\S*node\b/m);
    expect(readFileSync('bin/bnpl-recon.js', 'utf8').split('\n')[0]).toBe('#!/usr/bin/env node');
    // The launcher beside a package.json asking for a Node that does not exist yet.
    const dir = mkdtempSync(path.join(tmpdir(), 'launcher-'));
    cpSync(path.resolve('bin'), path.join(dir, 'bin'), { recursive: true });
    writeFileSync(path.join(dir, 'package.json'), JSON.stringify({ engines: { node: '>=999.1' } }));
    const old = spawnSync(process.execPath, [path.join(dir, 'bin/bnpl-recon.js'), '--help'], { encoding: 'utf8' });
    expect(old.status).toBe(2);
    expect(old.stderr).toContain('older than the supported >=999.1');
    const current = spawnSync(process.execPath, ['bin/bnpl-recon.js', '--help'], { encoding: 'utf8' });
    expect(current.status).toBe(0);
  });
});

describe.skipIf(!has('systemd-sysusers'))('sysusers.d entry', () => {
  it('creates the user and group the unit runs as, and a malformed entry is refused', () => {
    const root = mkdtempSync(path.join(tmpdir(), 'sysusers-'));
    mkdirSync(path.join(root, 'etc'));
    const ok = spawnSync('systemd-sysusers', ['--dry-run', `--root=${root}`, sysusersFile], { encoding: 'utf8' });
    expect(ok.status, ok.stderr).toBe(0);
    expect(ok.stderr + ok.stdout).toMatch(/Creating user 'bnpl-recon'/);
    expect(ok.stderr + ok.stdout).toMatch(/Creating group 'bnpl-recon'/);
    const unit = readFileSync(unitFile, 'utf8');
    expect(unit).toMatch(/^User=bnpl-recon$/m);
    expect(unit).toMatch(/^Group=bnpl-recon$/m);
    const bad = path.join(root, 'bad.conf');
    writeFileSync(bad, readFileSync(sysusersFile, 'utf8').replace(/^u /m, 'x '));
    expect(spawnSync('systemd-sysusers', ['--dry-run', `--root=${root}`, bad]).status).not.toBe(0);
  });
});
