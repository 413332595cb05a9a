import { describe, expect, it } from 'vitest';
import { Writable } from 'node:stream';
import { pino } from 'pino';
import { startProgress } from '../../src/lifecycle/progress.js';

function sink(isTTY: boolean) {
  let text = '';
  const stream = new Writable({ write: (chunk, _e, done) => { text += chunk.toString(); done(); } }) as unknown as NodeJS.WriteStream;
  (stream as { isTTY?: boolean }).isTTY = isTTY;
  return { stream, text: () => text };
}

describe('progress of a long command', () => {
  it('rewrites one terminal line with count, rate and time left, and clears it at the end', () => {
    let t = 0;
    const out = sink(true);
    const p = startProgress({ label: 'import a.xml', unit: 'lines', total: 1000, log: pino({ level: 'silent' }), stream: out.stream, now: () => t });
    t = 1000;
    p.update(250);
    expect(out.text()).toBe('\r\x1b[2Kimport a.xml: 250 lines, 250/s, 25%, ~3 s left');
    t = 1100;
    p.update(300); // within 250 ms of the last line: not redrawn
    expect(out.text().split('\r').length).toBe(2);
    p.finish();
    expect(out.text().endsWith('\r\x1b[2K')).toBe(true);
  });

  it('logs now and then when stderr is not a terminal, and writes nothing to it', () => {
    let t = 0;
    const out = sink(false);
    const lines: Record<string, unknown>[] = [];
    const log = pino({ level: 'info' }, new Writable({ write: (chunk, _e, done) => { lines.push(JSON.parse(chunk.toString()) as Record<string, unknown>); done(); } }));
    const p = startProgress({ label: 'poll sandbox', unit: 'pages', log, stream: out.stream, now: () => t, logEveryMs: 10_000 });
    t = 5_000;
    p.update(10);
    t = 10_000;
    p.update(20);
    p.finish();
    expect(out.text()).toBe('');
    expect(lines).toHaveLength(1);
    expect(lines[0]).toMatchObject({ msg: 'progress', progress: 'poll sandbox', done: 20, unit: 'pages', perSecond: 2 });
  });
});
