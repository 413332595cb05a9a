export { runPoll, type PollContext, type PollRunSummary } from './run.js';
export { startPollScheduler, type PollScheduler } from './scheduler.js';
export { tryAcquirePollLock, type PollLock } from './lock.js';
export { abandonStalePollRuns } from './runs.js';
export { createPollerMetrics } from './metrics.js';
