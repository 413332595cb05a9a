import { ApiError, api } from './api.js';
import { $, el } from './dom.js';
import { count, moneyCents } from './format.js';

// Hands a bank statement or a payout report to the daemon: the file's own bytes, imported by the
// same code as the inbox and the import commands. The answer (or the refusal's reason) is shown in
// the form's live region, in the reader's locale.

const KINDS = {
  statement: { form: 'up-statement', input: 'up-statement-file', result: 'up-statement-result', path: '/api/statements', what: 'statement' },
  report: { form: 'up-report', input: 'up-report-file', result: 'up-report-result', path: '/api/payout-reports', what: 'payout report' },
};

const facts = (pairs) => el('dl', { class: 'facts' }, pairs.filter(([, v]) => v !== null && v !== undefined && v !== '')
  .flatMap(([k, v]) => [el('dt', { text: k }), el('dd', { text: String(v) })]));

/** What the statement's balances showed, in words. */
function balances(r) {
  if (r.statements === null || r.balances_checked === null) return 'not recorded for a file imported before';
  const parts = [];
  if (r.balances_checked) parts.push(`checked and agreeing in ${count(r.balances_checked)} of ${count(r.statements)}`);
  if (r.balances_unchecked) parts.push(`not checked in ${count(r.balances_unchecked)} (a balance missing, or a CSV, which carries none)`);
  if (r.statements_unbalanced) parts.push(`${count(r.statements_unbalanced)} stored although unbalanced, with finding${r.unbalanced_findings.length === 1 ? '' : 's'} ${r.unbalanced_findings.join(', ')}`);
  return parts.join('; ') || 'no statement in the file';
}

function statementResult(r) {
  const totals = r.totals ?? [];
  return [
    el('p', { class: 'upload-ok', text: r.already_imported ? `${r.file} had been imported before: nothing was added.` : `Imported ${r.file} as statement ${r.statement_id}.` }),
    facts([
      ['Format', r.format], ['Statements', count(r.statements)], ['Lines read', count(r.lines_read)], ['Lines new', count(r.lines_new)],
      ['Already known', count(r.lines_known)], ['Known from overlapping statements', count(r.lines_overlap)],
      ...totals.flatMap((t) => [[`Credits (${t.currency})`, moneyCents(t.credit_cents, t.currency)], [`Debits (${t.currency})`, moneyCents(t.debit_cents, t.currency)]]),
      ['Balances', balances(r)],
    ]),
  ];
}

function reportResult(r) {
  return [
    el('p', { class: 'upload-ok', text: r.already_imported ? `${r.file} had been imported before: nothing was added.` : `Imported ${r.file}.` }),
    facts([['Format', r.format], ['Rows', count(r.rows)], ['Rows new', count(r.rows_new)], ['Payouts', r.payouts.join(', ') || 'none']]),
  ];
}

async function submit(kind, ev) {
  ev.preventDefault();
  const k = KINDS[kind];
  const file = $(k.input).files?.[0];
  const region = $(k.result);
  const button = $(k.form).querySelector('button[type="submit"]');
  if (!file) {
    region.replaceChildren(el('p', { class: 'error', text: `Choose a ${k.what} file first.` }));
    return;
  }
  button.disabled = true;
  region.replaceChildren(el('p', { class: 'status', text: `Uploading ${file.name}…` }));
  let r;
  try {
    const response = await api(`${k.path}?name=${encodeURIComponent(file.name)}`, {
      method: 'POST', body: file, headers: { 'content-type': 'application/octet-stream' },
    });
    r = await response.json();
  } catch (error) {
    // The daemon's error answer: 422 is the import's own refusal of the file, any other kept it from
    // being imported at all (the import is one transaction). No answer from the daemon (the
    // connection lost, a proxy's 502 or 504 page while the daemon still imports): it may have stored
    // the file, so the page does not say it did not.
    const refused = error instanceof ApiError && error.status === 422;
    region.replaceChildren(
      el('p', { class: 'error', text: error instanceof ApiError && error.fromDaemon
        ? `${file.name} was ${refused ? 'refused' : 'not imported'}: nothing was stored.`
        : `${file.name}: the daemon's answer did not arrive, so whether it was imported is not known; uploading it again adds nothing it already holds.` }),
      el('p', { class: 'upload-reason', text: error.message }));
    return;
  } finally {
    button.disabled = false;
  }
  // Drawn after the answer: a failure to draw it must not read as a failure to import.
  $(k.input).value = '';
  window.dispatchEvent(new CustomEvent('data-changed'));
  try {
    region.replaceChildren(...(kind === 'statement' ? statementResult(r) : reportResult(r)));
  } catch (error) {
    region.replaceChildren(el('p', { class: 'upload-ok', text: `Imported ${file.name}; its result could not be shown here (${error.message}).` }));
  }
}

export function setUpUpload() {
  for (const kind of Object.keys(KINDS)) $(KINDS[kind].form).addEventListener('submit', (ev) => void submit(kind, ev));
}

/** The upload view loads nothing; its forms are ready. */
export async function showUpload() {}
