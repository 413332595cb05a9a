import { spawn, type ChildProcessByStdio } from 'node:child_process';
import type { Readable } from 'node:stream';
import { fileURLToPath } from 'node:url';
import { configSchema } from '../../src/config/schema.js';
import { waitFor } from './harness.js';

export const REPO_ROOT = fileURLToPath(new URL('../..', import.meta.url));

/** The parent's environment without any bnpl-recon setting, so a developer's shell cannot leak in. */
export function cleanEnv(settings: Record<string, string>): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = { ...process.env };
  for (const key of Object.keys(configSchema.shape)) delete env[key];
  return { ...env, ...settings };
}

export interface CliChild {
  child: ChildProcessByStdio<null, Readable, Readable>;
  pid: number;
  stdout(): string;
  stderr(): string;
  /** Parsed JSON log lines so far (pino writes the daemon's log to stdout). */
  logs(): Record<string, unknown>[];
  exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
  /** Waits for a log line whose msg is `msg`, bounded. */
  waitForLog(msg: string, timeoutMs?: number): Promise<Record<string, unknown>>;
  kill(): void;
}

/** `node --import tsx src/cli.ts ARGS` as one process (no tsx wrapper), so signals reach the daemon itself. */
export function spawnCli(args: string[], env: NodeJS.ProcessEnv): CliChild {
  const child = spawn(process.execPath, ['--import', 'tsx', 'src/cli.ts', ...args], { cwd: REPO_ROOT, env, stdio: ['ignore', 'pipe', 'pipe'] });
  let out = '';
  let err = '';
  child.stdout.on('data', (d: Buffer) => (out += d.toString()));
  child.stderr.on('data', (d: Buffer) => (err += d.toString()));
  let done = false;
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) =>
    child.on('exit', (code, signal) => {
      done = true;
      resolve({ code, signal });
    }),
  );
  const logs = () =>
    out
      .split('\n')
      .filter((line) => line.startsWith('{'))
      .flatMap((line) => {
        try {
          return [JSON.parse(line) as Record<string, unknown>];
        } catch {
          return [];
        }
      });
  return {
    child,
    pid: child.pid ?? -1,
    stdout: () => out,
    stderr: () => err,
    logs,
    exited,
    waitForLog: (msg, timeoutMs = 30_000) =>
      waitFor(`log '${msg}' (stderr so far: ${err.slice(-500)})`, () => {
        if (done) throw new Error(`the process exited before logging '${msg}': ${err.slice(-2000)}`);
        return logs().find((l) => l.msg === msg);
      }, timeoutMs),
    kill: () => {
      if (!done) child.kill('SIGKILL');
    },
  };
}

/** Runs a short command to completion (bounded). */
export async function runCli(args: string[], env: NodeJS.ProcessEnv, timeoutMs = 60_000): Promise<{ code: number | null; stdout: string; stderr: string }> {
  const c = spawnCli(args, env);
  const timer = setTimeout(() => c.kill(), timeoutMs);
  try {
    const { code } = await c.exited;
    return { code, stdout: c.stdout(), stderr: c.stderr() };
  } finally {
    clearTimeout(timer);
  }
}
