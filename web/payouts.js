import { download, pagedList } from './api.js';
import { $, el, table } from './dom.js';
import { dateTime, date, money, moneyCents } from './format.js';

const state = Object.assign(pagedList('/api/payouts?limit=500'), { open: new Set() });
const HEADERS = ['SEPA reference', 'Amount', 'Status', 'Received', 'Matched bank lines', 'Invoices paid', 'Credited', 'Difference', 'Composition', 'Payout'];
const PARTS = [
  ['gross', 'Gross (invoices)'], ['fee', 'Fee (discount and fixed fee)'], ['vat', 'VAT on the fee'], ['credit_notes', 'Credit notes'],
  ['buyer_payments', 'Buyer payments'], ['other_deductions', 'Other deductions (disputes)'], ['net', 'Net transfer'],
];

/** '<bank reference> 2026-03-04' entries, with the booking day in the locale's way. */
const bankLines = (text) => (text ?? '').split(';').filter(Boolean).map((l) => l.replace(/(\d{4}-\d{2}-\d{2})$/, (d) => date(d))).join(', ') || 'none';

/**
 * A payout's composition from its payout report beside what the payout event says (its amount, the
 * net) and what the bank credited: the three sources side by side, differences marked.
 */
function composition(p) {
  const reported = p.report_net !== null && p.report_net !== undefined;
  const cell = (v) => money(v, p.currency);
  const rows = PARTS.map(([key, name]) => {
    const report = p[`report_${key}`];
    const net = key === 'net';
    return [name, reported ? cell(report) : '', net ? cell(p.amount) : '', net ? cell(p.credited_amount) : ''];
  });
  const notes = [];
  if (!reported) notes.push('No payout report imported for this payout yet.');
  else if (p.amount !== null && p.report_net !== p.amount) notes.push(`The report's net differs from the payout event's amount by ${moneyCents((BigInt(p.report_net_cents) - BigInt(p.amount_cents)).toString(), p.currency)}.`);
  if (p.difference !== null && Number(p.difference) !== 0) notes.push(`The bank credited ${money(p.difference, p.currency)} more than the payout event's amount (negative: less).`);
  // Lines in several currencies, or in another than the payout report's: not added, not compared.
  if (p.matched_bank_line && (p.credited_amount === null || p.credited_amount === undefined)) notes.push(`The bank booked it in another currency than ${p.currency ?? 'the payout\'s'} (or in several): amounts of two currencies are not compared. Its lines: ${p.matched_bank_line}.`);
  if (reported && notes.length === 0 && p.credited_amount === p.amount) notes.push('Report, payout event and bank credit agree.');
  return el('div', { class: 'composition' },
    table(`Composition of payout ${p.sepa_reference ?? p.payout_uuid}: payout report, payout event and bank credit side by side`,
      ['Part', 'Payout report', 'Payout event', 'Bank credit'], rows),
    ...notes.map((n) => el('p', { class: 'status', text: n })));
}

function render() {
  const rows = state.rows.flatMap((p) => {
    const diff = p.difference !== null && Number(p.difference) !== 0;
    const open = state.open.has(p.payout_uuid);
    const detailId = `comp-${p.payout_uuid}`;
    const main = el('tr', {},
      el('td', { class: 'ref', text: p.sepa_reference ?? '' }), el('td', { class: 'num', text: money(p.amount, p.currency) }), el('td', { text: p.status }),
      el('td', { text: dateTime(p.received_at) }),
      el('td', { class: 'ref', text: bankLines(p.matched_bank_line) }),
      el('td', { class: 'ref', text: (p.invoice_references ?? '').split(';').join(', ') }),
      el('td', { class: 'num', text: money(p.credited_amount, p.currency) }),
      el('td', { class: diff ? 'num diff' : 'num', text: p.difference === null ? '' : `${money(p.difference, p.currency)}${diff ? ' (differs)' : ''}` }),
      el('td', {}, el('button', {
        type: 'button', class: 'composition-toggle', 'aria-expanded': open ? 'true' : 'false', 'aria-controls': open ? detailId : undefined,
        // The name starts with the visible word (WCAG 2.5.3, label in name).
        'aria-label': `${open ? 'Hide' : 'Show'} composition of payout ${p.sepa_reference ?? p.payout_uuid}`,
        onclick: () => { if (open) state.open.delete(p.payout_uuid); else state.open.add(p.payout_uuid); render(); },
      }, open ? 'Hide' : 'Show')),
      el('td', { class: 'ref', text: p.payout_uuid }));
    return open ? [main, el('tr', { class: 'detail', id: detailId }, el('td', { colspan: HEADERS.length }, composition(p)))] : [main];
  });
  $('payouts-table').replaceChildren(el('table', { id: 'payouts' },
    el('caption', { text: 'Payouts: the bank lines each matched, the invoices it paid, and (Show) its composition' }),
    el('thead', {}, el('tr', {}, HEADERS.map((h) => el('th', { scope: 'col', text: h })))),
    el('tbody', {}, rows.length ? rows : el('tr', {}, el('td', { colspan: HEADERS.length, text: 'No payouts yet.' })))));
  $('payouts-count').textContent = `${state.rows.length} payout${state.rows.length === 1 ? '' : 's'} shown${state.next ? ', more to load' : ''}.`;
  $('payouts-more').hidden = !state.next;
}

export async function loadPayouts(more = false) {
  if (await (more ? state.more() : state.load())) render();
}

async function downloadAs(path, fallback) {
  $('pay-dl-status').textContent = 'Preparing download…';
  try {
    $('pay-dl-status').textContent = `Downloaded ${await download(path, fallback)}.`;
  } catch (error) {
    $('pay-dl-status').textContent = `Download failed: ${error.message}`;
  }
}

export function setUpPayouts() {
  $('payouts-more').addEventListener('click', () => loadPayouts(true).catch((error) => ($('pay-dl-status').textContent = `Could not load more: ${error.message}`)));
  $('dl-payouts-csv').addEventListener('click', () => void downloadAs('/api/payouts?format=csv&bom=1', 'payouts.csv'));
  $('dl-payouts-xlsx').addEventListener('click', () => void downloadAs('/api/payouts?format=xlsx', 'payouts.xlsx'));
}
