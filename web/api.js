// Talks to the operator API with the token kept in sessionStorage: it lasts as long as the tab, is
// never in a URL, and is sent as a bearer header like any other API client's.
const KEY = 'bnpl-recon-token';

export const token = {
  get: () => sessionStorage.getItem(KEY),
  set: (value) => sessionStorage.setItem(KEY, value),
  clear: () => sessionStorage.removeItem(KEY),
};

export class ApiError extends Error {
  constructor(status, message, fromDaemon = false) {
    super(message);
    this.status = status;
    /** the daemon's own answer (its JSON error), not a proxy's page in its place */
    this.fromDaemon = fromDaemon;
  }
}

export async function api(path, options = {}) {
  const headers = { authorization: `Bearer ${options.token ?? token.get() ?? ''}`, ...(options.headers ?? {}) };
  if (options.body !== undefined && !headers['content-type']) headers['content-type'] = 'application/json';
  const response = await fetch(path, { method: options.method ?? 'GET', headers, body: options.body, cache: 'no-store' });
  if (!response.ok) {
    let message = `${response.status} ${response.statusText}`;
    // Whether the daemon answered (its JSON {error}), or something between (a proxy's 502/504 page).
    let fromDaemon = false;
    try {
      const body = await response.json();
      fromDaemon = typeof body?.error === 'string';
      message = body?.error ?? message;
    } catch {
      // not JSON: keep the status line
    }
    if (response.status === 401) window.dispatchEvent(new CustomEvent('signed-out'));
    throw new ApiError(response.status, message, fromDaemon);
  }
  return response;
}

export const getJson = async (path) => (await api(path)).json();

/** A report page: its rows and the cursor of the next one (Next-Cursor header), if any. */
export async function getPage(path) {
  const response = await api(path);
  return { rows: await response.json(), next: response.headers.get('next-cursor') };
}

/**
 * A list the API pages (`path` with `?limit=`), loaded into `list.rows` and `list.next`: `load()`
 * starts it again, `more()` adds the next page. One more page at a time (a second click while the
 * first was answered appended the same page twice), and an answer for a list loaded again since is
 * dropped. Both resolve true when they changed the list.
 */
export function pagedList(path) {
  const list = { rows: [], next: null };
  let loads = 0;
  let moreInFlight = false;
  list.load = async () => {
    const load = ++loads;
    const page = await getPage(path);
    if (load !== loads) return false;
    list.rows = page.rows;
    list.next = page.next;
    return true;
  };
  list.more = async () => {
    if (!list.next || moreInFlight) return false;
    const cursor = list.next;
    const load = loads;
    moreInFlight = true;
    try {
      const page = await getPage(`${path}&cursor=${encodeURIComponent(cursor)}`);
      if (load !== loads || cursor !== list.next) return false;
      list.rows = [...list.rows, ...page.rows];
      list.next = page.next;
      return true;
    } finally {
      moreInFlight = false;
    }
  };
  return list;
}

/** Fetches a report file with the bearer header and hands it to the browser as a download. */
export async function download(path, fallbackName) {
  const response = await api(path);
  const disposition = response.headers.get('content-disposition') ?? '';
  const name = /filename="([^"]+)"/.exec(disposition)?.[1] ?? fallbackName;
  const blob = await response.blob();
  const url = URL.createObjectURL(blob);
  const a = document.createElement('a');
  a.href = url;
  a.download = name;
  document.body.append(a);
  a.click();
  a.remove();
  setTimeout(() => URL.revokeObjectURL(url), 10_000);
  return name;
}
