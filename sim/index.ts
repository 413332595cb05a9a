/** The provider simulator's public surface: for tests, the demo and the `sim` command. */
export { startSimulator } from './simulator.js';
export type { Simulator, SimulatorStats } from './simulator-api.js';
export { DEFAULT_FAULT_RATES, NO_FAULTS, NO_PAYLOAD_VARIANTS, ENVIRONMENTS, loadScenario, validateFaults } from './options.js';
export type { Env, FaultRates, PayloadVariantRates, BusinessOptions, SimulatorOptions, Scenario } from './options.js';
export type { GroundTruth, ExpectedDiscrepancy, RejectedDelivery, BenignFault, UncertainDelivery } from './ground-truth.js';
export type { AttemptRecord, DeliveryStats } from './delivery.js';
export type { PlannedDelivery } from './faults.js';
export { DAY_MS, HOUR_MS, MINUTE_MS, SECOND_MS, parseDuration } from './time.js';
export { DEFAULT_CONTRACT_TERMS } from './contract.js';
export type { ContractTermsInput } from './contract.js';
