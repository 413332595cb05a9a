export { runPoll, type PollContext, type PollRunSummary } from './run.js';
export { startPollScheduler, type PollScheduler } from './scheduler.js';
export { pollOnce } from './once.js';
