import { download, getJson, pagedList } from './api.js';
import { $, el, table } from './dom.js';
import { count, date, dateTime, money, startOfDay } from './format.js';

const PAGE = 500;
const state = pagedList(`/api/invoices?limit=${PAGE}`);
const COLUMNS = ['Reference', 'Order', 'Invoiced', 'Amount', 'Factoring', 'Payout', 'Paid out', 'Deductions', 'Net', 'Bank credit', 'Days to cash', 'Open findings'];

/** Where the invoice stands on its way to cash, for the filter. */
function stage(r) {
  if (r.canceled === 'true') return 'canceled';
  if (r.bank_credit_date) return 'cash';
  if (r.payout_uuid) return 'paid';
  // Not owed: the ageing of what is not yet paid out (reports/invoices.ts) leaves it out too.
  if (r.factoring_state === 'declined') return 'declined';
  return 'waiting';
}

/** The filter form applied to the loaded rows (the API's invoices report takes no filters). */
function filtered() {
  const form = new FormData($('inv-filters'));
  const want = String(form.get('state') ?? '');
  // The picked day in the zone the Invoiced column is shown in; invoice_date is an instant in UTC.
  const since = Date.parse(startOfDay(form.get('since')));
  const q = String(form.get('q') ?? '').trim().toLocaleLowerCase();
  return state.rows.filter((r) => (want === '' || (want === 'findings' ? Number(r.open_findings) > 0 : stage(r) === want))
    && (Number.isNaN(since) || Date.parse(r.invoice_date ?? '') >= since)
    && (q === '' || [r.reference, r.order_uuid, r.payout_sepa_reference].some((v) => (v ?? '').toLocaleLowerCase().includes(q))));
}

function render() {
  const shown = filtered();
  const rows = shown.map((r) => el('tr', {},
    el('td', { class: 'ref', text: r.reference ?? '' }),
    el('td', { class: 'ref', text: r.order_uuid ?? '' }),
    el('td', { text: dateTime(r.invoice_date) }),
    el('td', { class: 'num', text: money(r.amount, r.currency) }),
    el('td', { text: [r.factoring_state, r.canceled === 'true' ? 'canceled' : ''].filter(Boolean).join(', ') }),
    el('td', { class: 'ref', text: r.payout_sepa_reference ? `${r.payout_sepa_reference}${Number(r.payouts) > 1 ? ` (listed by ${r.payouts} payouts)` : ''}` : 'not yet' }),
    el('td', { text: dateTime(r.payout_date) }),
    el('td', { class: 'num', text: money(r.deductions, r.currency) }),
    el('td', { class: 'num', text: money(r.net, r.currency) }),
    el('td', { text: date(r.bank_credit_date) }),
    el('td', { class: 'num', text: r.days_to_cash ?? '' }),
    el('td', { class: Number(r.open_findings) > 0 ? 'num diff' : 'num', text: count(r.open_findings) })));
  $('invoices-table').replaceChildren(el('table', { id: 'invoices' },
    el('caption', { text: 'Each invoice\'s way to cash: the payout that listed it, what the provider kept back, and the bank credit' }),
    el('thead', {}, el('tr', {}, COLUMNS.map((h) => el('th', { scope: 'col', text: h })))),
    el('tbody', {}, rows.length ? rows : el('tr', {}, el('td', { colspan: COLUMNS.length, text: state.rows.length ? 'No loaded invoice matches these filters.' : 'No invoices yet.' })))));
  $('invoices-count').textContent = `${shown.length} of ${state.rows.length} loaded invoice${state.rows.length === 1 ? '' : 's'} shown${state.next ? ', more to load' : ''}.`;
  $('invoices-more').hidden = !state.next;
}

async function showAgeing() {
  const rows = await getJson('/api/invoices?ageing=1');
  const currency = rows.find((r) => r.currency)?.currency ?? 'EUR';
  const total = rows.reduce((n, r) => n + BigInt(r.amount_cents ?? '0'), 0n);
  const totalText = `${total < 0n ? '-' : ''}${(total < 0n ? -total : total) / 100n}.${String((total < 0n ? -total : total) % 100n).padStart(2, '0')}`;
  $('ageing-table').replaceChildren(table('Invoices not canceled, not declined and listed by no completed payout, by days since the invoice date',
    ['Days since invoiced', 'Invoices', 'Amount'],
    [...rows.map((r) => [r.bucket, count(r.invoices), money(r.amount, r.currency)]),
      ['Total', count(rows.reduce((n, r) => n + Number(r.invoices), 0)), money(totalText, currency)]],
    { class: 'num-2 ageing', id: 'ageing' }));
}

export async function loadInvoices(more = false) {
  if (more) {
    if (await state.more()) render();
    return;
  }
  if (!(await state.load())) return;
  render();
  await showAgeing();
}

async function downloadAs(path, fallback) {
  $('inv-dl-status').textContent = 'Preparing download…';
  try {
    $('inv-dl-status').textContent = `Downloaded ${await download(path, fallback)}.`;
  } catch (error) {
    $('inv-dl-status').textContent = `Download failed: ${error.message}`;
  }
}

export function setUpInvoices() {
  $('inv-filters').addEventListener('submit', (ev) => {
    ev.preventDefault();
    render();
  });
  $('invoices-more').addEventListener('click', () => loadInvoices(true).catch((error) => ($('inv-dl-status').textContent = `Could not load more: ${error.message}`)));
  $('dl-invoices-csv').addEventListener('click', () => void downloadAs('/api/invoices?format=csv&bom=1', 'invoices.csv'));
  $('dl-invoices-xlsx').addEventListener('click', () => void downloadAs('/api/invoices?format=xlsx', 'invoices.xlsx'));
  $('dl-ageing-csv').addEventListener('click', () => void downloadAs('/api/invoices?ageing=1&format=csv&bom=1', 'invoice-ageing.csv'));
}
