export { runReconcilePass, type ReconcileContext } from './pass.js';
export { ORDER_RULE_KINDS, RULE_KINDS, RULES } from './rules/index.js';
export { startReconcileScheduler, type ReconcileScheduler } from './scheduler.js';
export { acknowledgeDiscrepancy, operatorActor, type AckResult, type AcknowledgedDiscrepancy } from './ack.js';
export { createReconcileMetrics, type ReconcileMetrics } from './metrics.js';
export { ORDER_STATES_WITH_TOPIC, type PassSummary } from './types.js';
export { recordFinding, type RecordedFinding } from './recorded.js';
