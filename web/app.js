import { ApiError, api, token } from './api.js';
import { $ } from './dom.js';
import { loadDiscrepancies, setUpDiscrepancies } from './discrepancies.js';
import { setTimeZone } from './format.js';
import { loadInvoices, setUpInvoices } from './invoices.js';
import { showOverview } from './overview.js';
import { loadPayouts, setUpPayouts } from './payouts.js';
import { setUpUpload, showUpload } from './upload.js';

const VIEWS = { overview: showOverview, discrepancies: loadDiscrepancies, invoices: loadInvoices, payouts: loadPayouts, upload: showUpload };
// The views that show what the ledger holds: loaded again after an upload changed it.
const DATA_VIEWS = ['overview', 'discrepancies', 'invoices', 'payouts'];

function showEnvironment(environment, operator) {
  const banner = $('env-banner');
  banner.hidden = false;
  banner.className = `env env-${environment}`;
  banner.textContent = environment === 'production' ? 'PRODUCTION: real money' : 'SANDBOX: test data, not real money';
  document.body.dataset.env = environment;
  document.title = `[${environment.toUpperCase()}] bnpl-recon`;
  $('who').hidden = false;
  $('who').textContent = `Signed in as ${operator}`;
  $('sign-out').hidden = false;
}

async function route() {
  const name = (location.hash.slice(1) || 'overview');
  // Own names only: '#constructor' named Object.prototype's and hid every view.
  const view = Object.hasOwn(VIEWS, name) ? name : 'overview';
  for (const v of Object.keys(VIEWS)) $(`view-${v}`).hidden = v !== view;
  for (const a of document.querySelectorAll('#nav a')) {
    if (a.dataset.view === view) a.setAttribute('aria-current', 'page');
    else a.removeAttribute('aria-current');
  }
  await loadView(view, true);
}

/**
 * Loads a view; its one error line says why its last load failed, and goes once one succeeds (an
 * old "Could not load" under a fresh table read as about it). `say`: show a failure (the view is
 * the one opened); a view loaded in the background says nothing until it is opened.
 */
async function loadView(view, say) {
  const section = $(`view-${view}`);
  try {
    await VIEWS[view]();
    for (const old of section.querySelectorAll(':scope > p.error')) old.remove();
  } catch (error) {
    if (!say || (error instanceof ApiError && error.status === 401)) return;
    for (const old of section.querySelectorAll(':scope > p.error')) old.remove();
    section.append(Object.assign(document.createElement('p'), { className: 'error', role: 'alert', textContent: `Could not load: ${error.message}` }));
  }
}

async function signIn(candidate) {
  const response = await api('/api/session', { token: candidate });
  const session = await response.json();
  token.set(candidate);
  setTimeZone(session.time_zone);
  $('sign-in').hidden = true;
  $('nav').hidden = false;
  showEnvironment(session.environment, session.operator);
  await route();
  $('main').focus();
}

function signOut() {
  token.clear();
  location.hash = '';
  location.reload();
}

window.addEventListener('signed-out', () => {
  token.clear();
  // A modal dialog (a finding's evidence) would keep the sign-in form out of reach behind it.
  for (const dialog of document.querySelectorAll('dialog[open]')) dialog.close();
  $('sign-in').hidden = false;
  $('nav').hidden = true;
  for (const v of Object.keys(VIEWS)) $(`view-${v}`).hidden = true;
  $('sign-in-error').textContent = 'The token was not accepted. Sign in again.';
});

$('sign-in-form').addEventListener('submit', async (ev) => {
  ev.preventDefault();
  $('sign-in-error').textContent = '';
  const input = $('token');
  try {
    await signIn(input.value.trim());
    input.value = '';
  } catch (error) {
    $('sign-in-error').textContent = error instanceof ApiError && error.status === 401 ? 'That token is not known here.' : `Sign-in failed: ${error.message}`;
  }
});
$('sign-out').addEventListener('click', signOut);
window.addEventListener('data-changed', () => {
  // Each view renders into its own (hidden) section; one that fails says so when it is opened.
  for (const view of DATA_VIEWS) void loadView(view, false);
});
window.addEventListener('hashchange', () => void route());
setUpDiscrepancies();
setUpPayouts();
setUpInvoices();
setUpUpload();
const saved = token.get();
if (saved) signIn(saved).catch(() => token.clear());
