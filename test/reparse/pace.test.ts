import { describe, expect, it } from 'vitest';
import { YieldingPace } from '../../src/batch/pace.js';
import { RecentCommits } from '../../src/webhooks/commit-pressure.js';

const settings = { maxDuty: 0.5, minDuty: 1 / 32, yieldAboveMs: 15, step: 0.05 };

describe('the pace of the daemon\'s reparse', () => {
  it('works at its most while the receiver\'s commits are fast: a 10 ms batch at duty 0.5 rests 10 ms', () => {
    const pace = new YieldingPace(settings);
    expect(pace.pauseAfter(10, 0)).toBeCloseTo(10);
    expect(pace.pauseAfter(10, 3)).toBeCloseTo(10);
    expect(pace.duty).toBe(0.5);
  });

  it('halves its duty after each batch the receiver\'s commits were slow, down to the floor, and gains it back step by step', () => {
    const pace = new YieldingPace(settings);
    expect(pace.pauseAfter(10, 40)).toBeCloseTo(30); // duty 0.25
    expect(pace.pauseAfter(10, 40)).toBeCloseTo(70); // 0.125
    for (let i = 0; i < 10; i += 1) pace.pauseAfter(10, 40);
    expect(pace.duty).toBe(1 / 32);
    expect(pace.pauseAfter(10, 40)).toBeCloseTo(310);
    // Between half the threshold and the threshold: the duty holds.
    expect(pace.pauseAfter(10, 10)).toBeCloseTo(310);
    pace.pauseAfter(10, 0);
    expect(pace.duty).toBeCloseTo(1 / 32 + 0.05);
    for (let i = 0; i < 20; i += 1) pace.pauseAfter(10, 0);
    expect(pace.duty).toBe(0.5);
  });

  it('rests for work at its present duty without changing it (an import\'s chunks between its statements)', () => {
    const pace = new YieldingPace(settings);
    pace.pauseAfter(10, 40); // duty 0.25
    expect(pace.restFor(10)).toBeCloseTo(30);
    expect(pace.restFor(10)).toBeCloseTo(30);
    expect(pace.duty).toBe(0.25);
  });

  it('tells to yield only above the threshold', () => {
    const pace = new YieldingPace(settings);
    expect(pace.mustYield(15)).toBe(false);
    expect(pace.mustYield(15.5)).toBe(true);
  });
});

describe('the receiver\'s recent commits', () => {
  it('gives the slowest commit since a time, forgetting older ones and the oldest past its size', () => {
    const commits = new RecentCommits(3);
    expect(commits.worstSince(0)).toBe(0);
    commits.record(40, 100);
    commits.record(5, 200);
    commits.record(7, 300);
    expect(commits.worstSince(0)).toBe(40);
    expect(commits.worstSince(150)).toBe(7);
    commits.record(2, 400); // overwrites the 40 ms commit
    expect(commits.worstSince(0)).toBe(7);
    expect(commits.worstSince(401)).toBe(0);
  });
});
