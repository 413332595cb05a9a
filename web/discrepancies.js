import { api, download, getJson, getPage } from './api.js';
import { $, el, label, money, table } from './dom.js';
import { centsInText, date, dateTime, moneyCents, namedCentsInText, startOfDay } from './format.js';

export const KINDS = [
  'missed_webhook', 'state_mismatch', 'orphan_webhook', 'duplicate_event', 'duplicate_delivery', 'payout_not_on_statement',
  'statement_credit_without_payout', 'payout_amount_mismatch', 'payout_cancelled_but_credited', 'payout_unknown_invoice',
  'statement_unbalanced', 'invoice_not_paid_out', 'invoice_paid_out_twice', 'payout_pays_canceled_invoice',
  'buyer_paid_merchant_directly', 'payout_deduction_mismatch', 'payout_report_mismatch',
];
// Kinds whose expected and observed are amounts in cents (the rules' header comments say so).
const CENTS_KINDS = new Set([
  'payout_not_on_statement', 'statement_credit_without_payout', 'payout_amount_mismatch', 'payout_cancelled_but_credited',
  'invoice_not_paid_out', 'buyer_paid_merchant_directly', 'payout_report_mismatch',
  // expected the closing balance, observed the balance the bookings reach (statements/import.ts).
  'statement_unbalanced',
]);
// Kinds whose expected and observed list each failing check as name=cents (payout-deduction-mismatch.ts).
const NAMED_CENTS_KINDS = new Set(['payout_deduction_mismatch']);
const COLUMNS = [
  ['id', 'Id', 'num'], ['kind', 'Kind'], ['status', 'Status'], ['external_reference_id', 'Reference'], ['sepa_reference', 'SEPA reference'],
  ['amount', 'Amount', 'num'], ['first_detected_at', 'First detected'], ['acknowledged_by', 'Acknowledged by'],
];
const PAGE = 500;
// query: the filters the shown rows were loaded with, which Load more continues (the form may
// have been edited since without being applied); loads: counts lists, so a Load more answered
// after the filters were applied again adds nothing to the new list.
const state = { rows: [], next: null, query: null, loads: 0, moreInFlight: false, sort: 'id', dir: 1, evidenceLoads: 0, openedId: null };

/**
 * The filter form as API query parameters (the same the CLI takes). The picked day is the day in the
 * zone the page shows times in, sent as its first instant with the offset.
 */
function filterQuery() {
  const form = new FormData($('filters'));
  const q = new URLSearchParams();
  for (const [k, v] of form) if (String(v).trim() !== '') q.set(k, String(v).trim());
  const since = q.get('since');
  if (since) q.set('since', startOfDay(since) || since);
  return q;
}

/** The Reference column shows a statement line's id where the finding names no reference: it sorts by what it shows. */
const reference = (r) => r.external_reference_id ?? (r.entity_type === 'statement_line' ? r.entity_id : '');
const sortValue = (r, key) => (key === 'external_reference_id' ? reference(r) : r[key]);

function sorted() {
  const { sort, dir } = state;
  const numeric = COLUMNS.find((c) => c[0] === sort)?.[2] === 'num';
  return [...state.rows].sort((a, b) => {
    const x = sortValue(a, sort), y = sortValue(b, sort);
    if (x === y) return a.id - b.id;
    if (x === null || x === undefined || x === '') return 1;
    if (y === null || y === undefined || y === '') return -1;
    return (numeric ? Number(x) - Number(y) : String(x).localeCompare(String(y))) * dir;
  });
}

function render() {
  const head = el('tr', {}, COLUMNS.map(([key, title]) => {
    const active = state.sort === key;
    return el('th', { scope: 'col', 'aria-sort': active ? (state.dir === 1 ? 'ascending' : 'descending') : 'none' },
      el('button', { type: 'button', class: 'sort', onclick: () => { state.dir = active ? -state.dir : 1; state.sort = key; render(); } },
        title, el('span', { 'aria-hidden': 'true', text: active ? (state.dir === 1 ? ' ▲' : ' ▼') : '' })));
  }), el('th', { scope: 'col', text: 'Evidence' }));
  const rows = sorted().map((r) => el('tr', {},
    el('td', { class: 'num', text: r.id }), el('td', { text: label(r.kind) }), el('td', {}, el('span', { class: `badge s-${r.status}`, text: r.status })),
    el('td', { class: 'ref', text: reference(r) }), el('td', { class: 'ref', text: r.sepa_reference ?? '' }),
    el('td', { class: 'num', text: money(r.amount, r.currency) }), el('td', { text: dateTime(r.first_detected_at) }),
    el('td', { text: (r.acknowledged_by ?? '').replace(/^operator:/, '') }),
    el('td', {}, el('button', {
      type: 'button', class: 'open', 'data-id': r.id, 'aria-label': `Open evidence of discrepancy ${r.id}`,
      onclick: () => openEvidence(r.id).catch((error) => ($('dl-status').textContent = `Could not open discrepancy ${r.id}: ${error.message}`)),
    }, 'Open'))));
  $('disc-table').replaceChildren(el('table', { id: 'disc' },
    el('caption', { text: 'Discrepancies matching the filters; column headings sort the loaded rows' }),
    el('thead', {}, head),
    el('tbody', {}, rows.length ? rows : el('tr', {}, el('td', { colspan: COLUMNS.length + 1, text: 'No discrepancy matches these filters.' })))));
  $('disc-count').textContent = `${state.rows.length} discrepanc${state.rows.length === 1 ? 'y' : 'ies'} shown${state.next ? ', more to load' : ''}.`;
  $('disc-more').hidden = !state.next;
}

/** The list with the filter form's values, or with `query` (the filters the shown list was loaded with). */
export async function loadDiscrepancies(query = filterQuery()) {
  const q = new URLSearchParams(query);
  q.delete('cursor');
  q.set('limit', String(PAGE));
  const load = ++state.loads;
  const page = await getPage(`/api/discrepancies?${q}`);
  if (load !== state.loads) return;
  state.rows = page.rows;
  state.next = page.next;
  state.query = q;
  render();
}

async function loadMore() {
  // One page at a time: a second click while the first is answered would append the same page twice.
  if (!state.next || !state.query || state.moreInFlight) return;
  const q = new URLSearchParams(state.query);
  const cursor = state.next;
  q.set('cursor', cursor);
  const load = state.loads;
  state.moreInFlight = true;
  try {
    const page = await getPage(`/api/discrepancies?${q}`);
    if (load !== state.loads || cursor !== state.next) return;
    state.rows.push(...page.rows);
    state.next = page.next;
    render();
  } finally {
    state.moreInFlight = false;
  }
}

function evidenceSection(title, content) {
  return el('section', { class: 'ev' }, el('h3', { text: title }), content);
}

async function openEvidence(id, focusNote = false) {
  const dialog = $('evidence');
  const body = $('evidence-body');
  // The finding clicked last is the one shown: an earlier click answered later is dropped, or the
  // note written next would be read as about the other finding.
  const load = ++state.evidenceLoads;
  const e = await getJson(`/api/discrepancies/${id}`);
  if (load !== state.evidenceLoads) return;
  state.openedId = id;
  const d = e.discrepancy;
  $('evidence-title').textContent = `Discrepancy ${d.id}: ${label(d.kind)}`;
  const acknowledged = d.status === 'acknowledged' && d.acknowledged_by;
  const note = el('textarea', { id: 'ack-note', name: 'note', required: true, maxlength: 4000, rows: 3 });
  const result = el('p', { class: 'status', role: 'status', id: acknowledged ? 'ack-form-result' : 'ack-result' });
  const ackForm = el('form', { class: 'ack', onsubmit: async (ev) => {
    ev.preventDefault();
    let said;
    try {
      const res = await api(`/api/discrepancies/${d.id}/ack`, { method: 'POST', body: JSON.stringify({ note: note.value }) });
      const done = await res.json();
      said = `Acknowledged by ${done.acknowledgedBy.replace(/^operator:/, '')} at ${dateTime(done.acknowledgedAt)}.`;
    } catch (error) {
      result.textContent = `Not acknowledged: ${error.message}`;
      return;
    }
    result.textContent = said;
    // The acknowledgement stands whatever the refresh after it meets (the ledger held, a 503).
    try {
      // The list as it was shown, not with filter edits not yet applied.
      await loadDiscrepancies(state.query ?? filterQuery());
      await openEvidence(d.id);
      $('ack-result').textContent = said;
      // The redrawn dialog lost the focus with the form it held: give it to the dialog's title.
      $('evidence-title').focus();
    } catch (error) {
      result.textContent = `${said} The list could not be refreshed: ${error.message}`;
    }
  } }, el('label', { for: 'ack-note', text: acknowledged ? 'Another note (the one above stays in the history)' : 'Note (why this is acknowledged)' }), note,
    el('button', { type: 'submit', disabled: d.status === 'resolved' }, acknowledged ? 'Add note' : 'Acknowledge'), result);
  // Once acknowledged, the acknowledgement itself is shown (who, when, note); a further note is a
  // deliberate step behind a disclosure, and every note stays in the history below.
  const ackPanel = acknowledged
    ? el('section', { class: 'ack-done', 'aria-labelledby': 'ack-done-title' },
      el('h3', { id: 'ack-done-title', text: 'Acknowledged' }),
      el('p', { id: 'ack-shown' }, `By ${d.acknowledged_by.replace(/^operator:/, '')} on ${dateTime(d.acknowledged_at)}:`),
      el('blockquote', { id: 'ack-shown-note', text: d.ack_note ?? '' }),
      el('p', { class: 'status', role: 'status', id: 'ack-result' }),
      el('details', {}, el('summary', { text: 'Add another note' }), ackForm))
    : ackForm;
  // A finding with no amount at stake (a report's figures) names its currency in its evidence.
  const currency = d.currency || d.evidence?.currency || 'EUR';
  const cents = (v) => (NAMED_CENTS_KINDS.has(d.kind) ? namedCentsInText(v, currency)
    : CENTS_KINDS.has(d.kind) && /^-?\d{1,19}$/.test(String(v ?? '')) ? moneyCents(v, currency) : v);
  const sentence = (text) => (NAMED_CENTS_KINDS.has(d.kind) ? namedCentsInText(text, currency) : centsInText(text, currency));
  body.replaceChildren(
    el('dl', { class: 'facts' }, ...[
      ['Status', d.status], ['Environment', d.environment], ['Entity', `${d.entity_type} ${d.entity_id}`], ['Reference', d.external_reference_id],
      ['SEPA reference', d.sepa_reference], ['Expected', cents(d.expected)], ['Observed', cents(d.observed)], ['Amount at stake', money(d.amount, d.currency)],
      ['Details', sentence(d.details)], ['First detected', dateTime(d.first_detected_at)], ['Last checked', dateTime(d.last_checked_at)],
      ['Resolved', dateTime(d.resolved_at)],
    ].filter(([, v]) => v).flatMap(([k, v]) => [el('dt', { text: k }), el('dd', { text: v })])),
    d.status === 'resolved' ? el('p', { text: 'Resolved by the reconciler: nothing to acknowledge.' }) : ackPanel,
    evidenceSection('History of status changes and notes', table('Status changes and notes, oldest first', ['When', 'From', 'To', 'Who', 'Why'],
      e.history.map((h) => [dateTime(h.at), h.from_status ?? '', h.to_status, h.actor, h.actor === 'reconciler' ? centsInText(h.reason, currency) : h.reason]))),
    evidenceSection(`Webhook deliveries (${e.deliveries.length})`, e.deliveries.length === 0 ? el('p', { text: 'No delivery names this entity.' })
      : el('ul', { class: 'deliveries' }, e.deliveries.map((w) => el('li', {},
        el('details', {}, el('summary', { text: `#${w.id} ${w.topic ?? '(no topic)'} received ${dateTime(w.received_at)}${w.applied ? ', applied' : ', retry'}${w.signature_valid ? '' : ', bad signature'}` }),
          el('pre', { tabindex: 0, 'aria-label': `Raw body of delivery ${w.id}`, text: w.raw_body })))))),
    evidenceSection('States the poller saw', e.polled_state || e.polled.length
      ? table('Polled states, newest first', ['Observed', 'State', 'Previous'], [
        ...(e.polled_state ? [[`${dateTime(e.polled_state.last_seen_at)} (latest)`, e.polled_state.state, '']] : []),
        ...e.polled.map((p) => [dateTime(p.observed_at), p.state, p.previous_state ?? ''])])
      : el('p', { text: 'Not an order the poller tracks.' })),
    evidenceSection('Bank statement lines', table('Bank lines with this SEPA reference', ['Booked', 'Amount', 'Direction', 'Bank reference', 'SEPA reference', 'Counterparty'],
      e.bank_lines.map((l) => [date(l.booking_date), money(l.amount, l.currency), l.direction, l.bank_reference ?? '', l.sepa_reference ?? '', l.counterparty_name ?? '']),
      { empty: 'No bank line.' })),
    evidenceSection('Evidence recorded by the rule', el('pre', { tabindex: 0, 'aria-label': 'Evidence as recorded', text: JSON.stringify(d.evidence, null, 2) })));
  if (!dialog.open) dialog.showModal();
  if (focusNote) note.focus();
}

async function downloadAs(format) {
  // The list that is shown: the filters its rows were loaded with, not the form edited since and
  // not applied (as Load more continues it); without it, whatever nothing was applied yet.
  const q = new URLSearchParams(state.query ?? filterQuery());
  q.delete('limit');
  q.delete('cursor');
  q.set('format', format);
  if (format === 'csv') q.set('bom', '1');
  $('dl-status').textContent = 'Preparing download…';
  try {
    const name = await download(`/api/discrepancies?${q}`, `discrepancies.${format}`);
    $('dl-status').textContent = `Downloaded ${name}.`;
  } catch (error) {
    $('dl-status').textContent = `Download failed: ${error.message}`;
  }
}

export function setUpDiscrepancies() {
  $('f-kind').append(...KINDS.map((k) => el('option', { value: k, text: label(k) })));
  $('filters').addEventListener('submit', (ev) => {
    ev.preventDefault();
    loadDiscrepancies().catch((error) => ($('dl-status').textContent = `Could not load the discrepancies: ${error.message}`));
  });
  $('disc-more').addEventListener('click', () => loadMore().catch((error) => ($('dl-status').textContent = `Could not load more: ${error.message}`)));
  $('dl-csv').addEventListener('click', () => void downloadAs('csv'));
  $('dl-xlsx').addEventListener('click', () => void downloadAs('xlsx'));
  $('evidence-close').addEventListener('click', () => $('evidence').close());
  // Closed, the dialog gives the focus back to the Open button it came from; one a reload redrew
  // (after an acknowledgement) is gone, and the focus stayed in the closed dialog or fell to the
  // page's top: the new button takes it.
  $('evidence').addEventListener('close', () => {
    const active = document.activeElement;
    if (active && active !== document.body && !$('evidence').contains(active)) return;
    const opener = state.openedId === null ? null : document.querySelector(`#disc button.open[data-id="${state.openedId}"]`);
    (opener ?? $('disc-count')).focus();
  });
}
