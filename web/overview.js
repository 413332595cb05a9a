import { getJson } from './api.js';
import { $, ago, el, label, money, table } from './dom.js';
import { count, dateTime } from './format.js';

const SVG = 'http://www.w3.org/2000/svg';
const svg = (tag, attrs = {}, ...children) => {
  const node = document.createElementNS(SVG, tag);
  for (const [k, v] of Object.entries(attrs)) node.setAttribute(k, String(v));
  for (const c of children) node.append(c);
  return node;
};

/** A line chart of open discrepancies over time; the same numbers follow as a table for screen readers. */
/** What the last statement import's balances showed: nothing when every statement balanced. */
function balancesNote(b) {
  if (!b) return '';
  const parts = [];
  if (b.balances_unchecked) parts.push(`balances not checked in ${b.balances_unchecked} of ${b.statements ?? '?'} statement(s)`);
  if (b.unbalanced) parts.push(`${b.unbalanced} stored unbalanced (see statement_unbalanced)`);
  return parts.length ? `; ${parts.join('; ')}` : '';
}

function lineChart(points) {
  const w = 600, h = 180, pad = 36;
  const max = Math.max(1, ...points.map((p) => p.open));
  const x = (i) => pad + (i * (w - 2 * pad)) / Math.max(1, points.length - 1);
  const y = (v) => h - pad + 8 - (v * (h - 2 * pad)) / max;
  const path = points.map((p, i) => `${i === 0 ? 'M' : 'L'}${x(i).toFixed(1)},${y(p.open).toFixed(1)}`).join(' ');
  const first = points[0]?.at ?? '', last = points.at(-1)?.at ?? '';
  return svg('svg', { viewBox: `0 0 ${w} ${h}`, role: 'img', 'aria-labelledby': 'chart-open-title', class: 'chart' },
    svg('title', { id: 'chart-open-title' }, `Open discrepancies from ${dateTime(first)} to ${dateTime(last)}: now ${points.at(-1)?.open ?? 0}, at most ${max}`),
    svg('line', { x1: pad, y1: y(0), x2: w - pad, y2: y(0), class: 'axis' }),
    svg('line', { x1: pad, y1: y(max), x2: pad, y2: y(0), class: 'axis' }),
    svg('text', { x: pad - 6, y: y(max) + 4, 'text-anchor': 'end', class: 'tick' }, String(max)),
    svg('text', { x: pad - 6, y: y(0) + 4, 'text-anchor': 'end', class: 'tick' }, '0'),
    svg('text', { x: pad, y: h - 4, class: 'tick' }, dateTime(first)),
    svg('text', { x: w - pad, y: h - 4, 'text-anchor': 'end', class: 'tick' }, dateTime(last)),
    svg('path', { d: path, class: 'line' }));
}

/** Matched (solid) and unmatched (hatched, darker) payouts per week as stacked bars. */
function barChart(weeks) {
  const w = 600, h = 180, pad = 36;
  const max = Math.max(1, ...weeks.map((r) => r.matched + r.unmatched));
  const band = (w - 2 * pad) / Math.max(1, weeks.length);
  const scale = (v) => (v * (h - 2 * pad)) / max;
  const bars = weeks.flatMap((r, i) => {
    const x0 = pad + i * band + band * 0.15, bw = band * 0.7;
    const hm = scale(r.matched), hu = scale(r.unmatched);
    return [
      svg('rect', { x: x0, y: h - pad - hm, width: bw, height: hm, class: 'bar-matched' }),
      svg('rect', { x: x0, y: h - pad - hm - hu, width: bw, height: hu, class: 'bar-unmatched' }),
      svg('text', { x: x0 + bw / 2, y: h - pad + 16, 'text-anchor': 'middle', class: 'tick' }, r.week),
    ];
  });
  return svg('svg', { viewBox: `0 0 ${w} ${h}`, role: 'img', 'aria-labelledby': 'chart-payouts-title', class: 'chart' },
    svg('title', { id: 'chart-payouts-title' }, `Payouts per week, matched and unmatched: ${weeks.map((r) => `${r.week} ${r.matched} matched, ${r.unmatched} unmatched`).join('; ') || 'none'}`),
    svg('line', { x1: pad, y1: h - pad, x2: w - pad, y2: h - pad, class: 'axis' }),
    svg('text', { x: pad - 6, y: pad + 4, 'text-anchor': 'end', class: 'tick' }, String(max)),
    ...bars);
}

export async function showOverview() {
  const body = $('overview-body');
  const o = await getJson('/api/overview');
  const total = o.open_by_kind.reduce((n, k) => n + k.open, 0);
  const f = o.freshness;
  const now = Date.parse(f.now) || Date.now();
  body.replaceChildren(
    el('div', { class: 'cards' },
      el('section', { class: 'card', 'aria-labelledby': 'h-open' },
        el('h3', { id: 'h-open', text: `Open discrepancies: ${total}` }),
        table('Open by kind and age (first detected; UTC days)', ['Kind', 'Today', 'This week', 'Older', 'Total'],
          o.open_by_kind.map((k) => [label(k.kind), k.today, k.week, k.older, k.open]), { empty: 'No open discrepancies.' })),
      el('section', { class: 'card', 'aria-labelledby': 'h-stake' },
        el('h3', { id: 'h-stake', text: 'Money at stake' }),
        table('Sum of the amounts involved in open findings, per kind', ['Kind', 'Amount', 'Findings'],
          o.at_stake.map((s) => [label(s.kind), money(s.amount, s.currency), s.findings]), { empty: 'No open finding involves an amount.', class: 'num-2' })),
      el('section', { class: 'card', 'aria-labelledby': 'h-fresh' },
        el('h3', { id: 'h-fresh', text: 'Freshness' }),
        el('dl', { class: 'fresh' },
          el('dt', { text: 'Last complete poll' }), el('dd', { text: f.last_poll ? `${ago(f.last_poll, now)} (${dateTime(f.last_poll)})` : 'never' }),
          el('dt', { text: 'Last reconciliation pass' }), el('dd', { text: f.last_pass ? `${ago(f.last_pass, now)} (${dateTime(f.last_pass)}, ${f.last_pass_status})` : 'never' }),
          el('dt', { text: 'Last statement import' }), el('dd', { text: f.last_statement_import ? `${ago(f.last_statement_import, now)} (${dateTime(f.last_statement_import)})${balancesNote(f.last_statement_balances)}` : 'never' })))),
    el('section', { class: 'card wide', 'aria-labelledby': 'h-time' },
      el('h3', { id: 'h-time', text: 'Open discrepancies over time' }),
      o.open_over_time.length ? lineChart(o.open_over_time) : el('p', { text: 'No history yet.' }),
      el('details', {}, el('summary', { text: 'As a table' }),
        table('Open discrepancies at each time', ['Time', 'Open'], o.open_over_time.map((p) => [dateTime(p.at), count(p.open)])))),
    el('section', { class: 'card wide', 'aria-labelledby': 'h-weeks' },
      el('h3', { id: 'h-weeks', text: 'Payouts matched versus unmatched, per week' }),
      el('p', { class: 'legend' }, el('span', { class: 'key key-matched', 'aria-hidden': 'true' }), ' matched (bank credits equal the payout) ',
        el('span', { class: 'key key-unmatched', 'aria-hidden': 'true' }), ' unmatched'),
      o.payouts_by_week.length ? barChart(o.payouts_by_week) : el('p', { text: 'No completed payouts yet.' }),
      table('Completed payouts per ISO week', ['Week', 'Matched', 'Unmatched'], o.payouts_by_week.map((r) => [r.week, r.matched, r.unmatched]))));
}
