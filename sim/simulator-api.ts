import type { AttemptRecord, DeliveryStats } from './delivery.js';
import type { PlannedDelivery } from './faults.js';
import type { GroundTruth } from './ground-truth.js';
import type { Env } from './options.js';
import type { Registration } from './registrations.js';

/** The simulator as tests, the demo and the `sim` command drive it (see README.md). */
export interface SimulatorStats extends DeliveryStats {
  events: number;
  simTime: string;
  orders: Record<Env, number>;
}

export interface Simulator {
  /** base URL, e.g. http://127.0.0.1:41234 (no trailing slash) */
  readonly url: string;
  readonly seed: string;
  readonly apiKeys: Record<Env, string>;
  readonly secrets: Record<Env, string>;
  readonly signatureHeader: string;
  /** the merchant's account (statements) and the provider's paying account (PAYOUT_SOURCE_IBANS) */
  readonly bank: Record<Env, { merchantIban: string; providerIban: string }>;
  /** simulated now, ms since the epoch */
  now(): number;
  /** Plays `simulatedMs` more of the business at once (the clock jumps); deliveries due by then are started. */
  advance(simulatedMs: number): Promise<void>;
  /** Plays `simulatedMs` more of the business at the time scale; resolves when the clock gets there. */
  runFor(simulatedMs: number): Promise<void>;
  /** Plays the business without end at the time scale (the `sim` command). */
  play(): void;
  /**
   * Stops the business at the simulated now: no new orders, events or faults from here on, while
   * deliveries already planned (retries and held-back ones included) still go out as the clock runs.
   * `play()` starts it again. The demo's settling phase: what was injected stops growing.
   */
  pause(): void;
  /** Resolves when every planned delivery, retries included, has succeeded or been given up. */
  drain(options?: { fastForward?: boolean }): Promise<void>;
  /** Every injected fault and its expected finding; `environment` keeps one environment's part. */
  groundTruth(options?: { environment?: Env }): GroundTruth;
  writeGroundTruth(file: string, options?: { environment?: Env }): Promise<void>;
  /** Writes <env>-statement.{camt053.xml,csv,mt940} per environment; returns the paths. */
  writeStatements(dir: string): Promise<string[]>;
  /**
   * Writes the payout report of every completed payout so far, per environment, as
   * `<env>-payout-<sepa_instruction_id>.{csv,xlsx}` (default both); returns the paths. The files'
   * form (decimal comma or point, separator, currency marks, optional columns) follows the seed.
   */
  writePayoutReports(dir: string, options?: { format?: 'csv' | 'xlsx' | 'both' }): Promise<string[]>;
  stats(): SimulatorStats;
  /** every delivery attempt so far (bounded to the last 100,000) */
  attempts(): readonly AttemptRecord[];
  /** deliveries planned so far (the first 50,000), in planning order: what a seed reproduces byte for byte */
  plannedDeliveries(): readonly PlannedDelivery[];
  registrations(env: Env): readonly Registration[];
  /** Same as POST /webhooks with that environment's key. */
  register(env: Env, topic: string, address: string): Registration;
  /** Resolves once any environment has a registration. */
  waitForRegistration(): Promise<void>;
  stop(): Promise<void>;
}
