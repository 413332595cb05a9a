import { fuzzCase, judgeParse } from './statement-fuzz-oracle.js';

/**
 * The parser-level half of the statement fuzz test, in a process of its own so that a case that
 * never returns (a parser loop) can be killed and named by the test, which a synchronous loop in
 * the test's own process would prevent. Cases run one after another; before each one the child
 * says which, so the parent's watchdog knows the case that hung.
 */
export interface ChildRequest {
  seed: number;
  from: number;
  count: number;
}
export type ChildMessage =
  | { type: 'at'; index: number }
  | {
      type: 'done';
      cases: number;
      ms: number;
      /** format -> outcome/reason -> cases */
      tally: Record<string, Record<string, number>>;
      redressed: number;
      entityTricks: number;
      problems: { index: number; label: string; problems: string[]; head: string }[];
      slowest: { index: number; label: string; ms: number; bytes: number }[];
    };

process.once('message', (request: ChildRequest) => {
  void run(request).then((done) => process.send?.(done, () => process.disconnect()));
});

async function run({ seed, from, count }: ChildRequest): Promise<ChildMessage> {
  const started = performance.now();
  const tally: Record<string, Record<string, number>> = {};
  const problems: Extract<ChildMessage, { type: 'done' }>['problems'] = [];
  const timings: { index: number; label: string; ms: number; bytes: number }[] = [];
  let redressed = 0;
  let entityTricks = 0;
  for (let index = from; index < from + count; index++) {
    process.send?.({ type: 'at', index } satisfies ChildMessage);
    const t = performance.now();
    const c = fuzzCase(seed, index);
    const j = judgeParse(c);
    const ms = performance.now() - t;
    const byFormat = (tally[c.format] ??= {});
    const key = j.outcome === 'accepted' ? 'accepted' : `refused: ${j.reason}`;
    byFormat[key] = (byFormat[key] ?? 0) + 1;
    if (c.expected) redressed += 1;
    if (c.entityTrick) entityTricks += 1;
    if (j.problems.length > 0) problems.push({ index, label: c.label, problems: j.problems.slice(0, 5), head: JSON.stringify(c.bytes.subarray(0, 300).toString('latin1')) });
    timings.push({ index, label: c.label, ms, bytes: c.bytes.length });
    // Lets the 'at' messages out while the loop runs.
    if (index % 250 === 0) await new Promise((resolve) => setImmediate(resolve));
  }
  const slowest = timings.sort((a, b) => b.ms - a.ms).slice(0, 5);
  return { type: 'done', cases: count, ms: performance.now() - started, tally, redressed, entityTricks, problems: problems.slice(0, 40), slowest };
}
