import { download, getPage } from './api.js';
import { $, el, money } from './dom.js';

const state = { rows: [], next: null };

function render() {
  const rows = state.rows.map((p) => {
    const diff = p.difference !== null && Number(p.difference) !== 0;
    return el('tr', {},
      el('td', { text: p.sepa_reference ?? '' }), el('td', { class: 'num', text: money(p.amount, p.currency) }), el('td', { text: p.status }),
      el('td', { text: (p.matched_bank_line ?? '').split(';').join(', ') || 'none' }),
      el('td', { text: (p.invoice_references ?? '').split(';').join(', ') }),
      el('td', { class: 'num', text: money(p.credited_amount, p.currency) }),
      el('td', { class: diff ? 'num diff' : 'num', text: p.difference === null ? '' : `${money(p.difference, p.currency)}${diff ? ' (differs)' : ''}` }),
      el('td', { text: p.payout_uuid }));
  });
  $('payouts-table').replaceChildren(el('table', { id: 'payouts' },
    el('caption', { text: 'Payouts: the bank lines each matched and the invoices it paid' }),
    el('thead', {}, el('tr', {}, ['SEPA reference', 'Amount', 'Status', 'Matched bank lines', 'Invoices paid', 'Credited', 'Difference', 'Payout'].map((h) => el('th', { scope: 'col', text: h })))),
    el('tbody', {}, rows.length ? rows : el('tr', {}, el('td', { colspan: 8, text: 'No payouts yet.' })))));
  $('payouts-count').textContent = `${state.rows.length} payout${state.rows.length === 1 ? '' : 's'} shown${state.next ? ', more to load' : ''}.`;
  $('payouts-more').hidden = !state.next;
}

export async function loadPayouts(more = false) {
  const page = await getPage(`/api/payouts?limit=500${more && state.next ? `&cursor=${encodeURIComponent(state.next)}` : ''}`);
  state.rows = more ? [...state.rows, ...page.rows] : page.rows;
  state.next = page.next;
  render();
}

export function setUpPayouts() {
  $('payouts-more').addEventListener('click', () => void loadPayouts(true));
  $('dl-payouts-csv').addEventListener('click', () => void download('/api/payouts?format=csv&bom=1', 'payouts.csv'));
  $('dl-payouts-xlsx').addEventListener('click', () => void download('/api/payouts?format=xlsx', 'payouts.xlsx'));
}
