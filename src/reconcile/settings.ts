import type { Sql } from 'postgres';
import type { Config, ProviderEnvironment } from '../config/schema.js';
import { DEFAULT_PAYOUT_SETTINGS } from './rules/payout-common.js';
import { buildInfo } from '../package/version.js';

/**
 * The settings a pass judges with, by setting name. Every pass records them (reconcile_runs.settings)
 * so that a one-off `reconcile` judges as the ledger's daemon does: with a shorter grace period
 * elsewhere, a one-off pass with the default would resolve what the daemon keeps open and the
 * daemon's next pass would reopen it, losing a person's acknowledgement on the way.
 */
export interface JudgingSettings {
  WEBHOOK_GRACE_SECONDS: number;
  PAYOUT_SETTLEMENT_DAYS: number;
  PAYOUT_SOURCE_IBANS: string[];
  PAYOUT_ACCOUNT_IBANS: string[];
  PAYOUT_REFERENCE_PATTERN: string | null;
}

/**
 * The key of reconcile_runs.settings beside the judging settings: what the invoice kinds were judged
 * with (invoice-scope.ts invoiceRulesKey), for the next pass's test whether to judge them again. It
 * is no setting a one-off pass adopts: its CONTRACT_TERMS come from a file the daemon's host holds.
 */
export const INVOICE_RULES_SETTING = 'invoice_rules';

/**
 * And the release that judged (package version and build commit, package/version.ts): a pass after
 * one judged by another release is full (scope.ts), so findings a changed rule would no longer make,
 * or would make now, do not wait for the daily full pass.
 */
export const RELEASE_SETTING = 'release';

export function currentRelease(): string {
  const { version, commit } = buildInfo();
  return `${version}+${commit}`;
}

export type JudgingConfig = Pick<Config, 'WEBHOOK_GRACE_SECONDS'> &
  Partial<Pick<Config, 'PAYOUT_SETTLEMENT_DAYS' | 'PAYOUT_SOURCE_IBANS' | 'PAYOUT_ACCOUNT_IBANS' | 'PAYOUT_REFERENCE_PATTERN'>>;

const iban = (value: string) => value.replace(/\s+/g, '').toUpperCase();

export function judgingSettings(config: JudgingConfig): JudgingSettings {
  return {
    WEBHOOK_GRACE_SECONDS: config.WEBHOOK_GRACE_SECONDS,
    PAYOUT_SETTLEMENT_DAYS: config.PAYOUT_SETTLEMENT_DAYS ?? DEFAULT_PAYOUT_SETTINGS.settlementDays,
    PAYOUT_SOURCE_IBANS: (config.PAYOUT_SOURCE_IBANS ?? []).map(iban).sort(),
    PAYOUT_ACCOUNT_IBANS: (config.PAYOUT_ACCOUNT_IBANS ?? []).map(iban).sort(),
    PAYOUT_REFERENCE_PATTERN: config.PAYOUT_REFERENCE_PATTERN ?? null,
  };
}

/** The settings that differ, each as `NAME: ours -> theirs`; empty when they judge alike. */
export function settingsDifferences(ours: JudgingSettings, theirs: JudgingSettings): string[] {
  const out: string[] = [];
  for (const name of Object.keys(ours) as (keyof JudgingSettings)[]) {
    const a = JSON.stringify(ours[name]);
    const b = JSON.stringify(theirs[name] ?? null);
    if (a !== b) out.push(`${name}: ${a} -> ${b}`);
  }
  return out;
}

export interface DaemonSettings {
  runId: number;
  startedAt: string;
  settings: JudgingSettings;
}

/** How far back a daemon's pass still speaks for the daemon: it runs a full pass at least every 24 h. */
export const DAEMON_SETTINGS_MAX_AGE_HOURS = 48;

/**
 * The settings of the newest complete pass the daemon (`start`) ran in the environment within
 * DAEMON_SETTINGS_MAX_AGE_HOURS, or undefined when no daemon has judged this ledger lately.
 */
export async function daemonSettings(sql: Sql, environment: ProviderEnvironment): Promise<DaemonSettings | undefined> {
  const [row] = await sql<{ id: string; started_at: string; settings: JudgingSettings }[]>`
    select id::text as id, to_char(started_at at time zone 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS"Z"') as started_at, settings
    from reconcile_runs
    where environment = ${environment} and origin = 'daemon' and status = 'complete' and settings is not null
      and started_at > now() - make_interval(hours => ${DAEMON_SETTINGS_MAX_AGE_HOURS})
    order by started_at desc, id desc
    limit 1`;
  if (!row) return undefined;
  const { [INVOICE_RULES_SETTING]: _invoiceRules, [RELEASE_SETTING]: _release, ...settings } = row.settings as JudgingSettings & {
    [INVOICE_RULES_SETTING]?: string;
    [RELEASE_SETTING]?: string;
  };
  return { runId: Number(row.id), startedAt: row.started_at, settings };
}

/** Recorded settings as configuration values (an unset pattern is absent, as in Config). */
export function settingsAsConfig(settings: JudgingSettings): JudgingConfig {
  const { PAYOUT_REFERENCE_PATTERN, ...rest } = settings;
  return PAYOUT_REFERENCE_PATTERN === null ? rest : { ...rest, PAYOUT_REFERENCE_PATTERN };
}
