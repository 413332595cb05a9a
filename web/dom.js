// Small DOM helpers: every value from the ledger goes in as text, never as markup.
export function el(tag, attrs = {}, ...children) {
  const node = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs)) {
    if (v === undefined || v === null || v === false) continue;
    if (k === 'class') node.className = v;
    else if (k === 'text') node.textContent = v;
    else if (k.startsWith('on')) node.addEventListener(k.slice(2), v);
    else node.setAttribute(k, v === true ? '' : String(v));
  }
  for (const child of children.flat()) if (child !== null && child !== undefined) node.append(child instanceof Node ? child : String(child));
  return node;
}

export const $ = (id) => document.getElementById(id);

export function table(caption, headers, rows, options = {}) {
  return el('table', { class: options.class, id: options.id },
    el('caption', { text: caption }),
    el('thead', {}, el('tr', {}, headers.map((h) => el('th', { scope: 'col', text: h })))),
    el('tbody', {}, rows.length === 0
      ? el('tr', {}, el('td', { colspan: headers.length, text: options.empty ?? 'Nothing to show.' }))
      : rows.map((r) => el('tr', {}, r.map((c) => (c instanceof Node ? el('td', {}, c) : el('td', { text: c ?? '' })))))));
}

export { money } from './format.js';

export const label = (kind) => kind.replaceAll('_', ' ');

/** How long ago an ISO instant was, for freshness ("3 min ago"). */
export function ago(iso, now = Date.now()) {
  if (!iso) return 'never';
  const seconds = Math.max(0, Math.round((now - Date.parse(iso)) / 1000));
  if (seconds < 90) return `${seconds} s ago`;
  if (seconds < 5400) return `${Math.round(seconds / 60)} min ago`;
  if (seconds < 172800) return `${Math.round(seconds / 3600)} h ago`;
  return `${Math.round(seconds / 86400)} days ago`;
}
