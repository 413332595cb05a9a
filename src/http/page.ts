import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { packageFile } from '../package/package-root.js';
import type { Route } from './server.js';

/**
 * The accountants' page: static files from the package's `web/`, written without a build
 * step and read once at start. Everything comes from this origin (the page must work on a closed
 * network), which the Content-Security-Policy also enforces; the data comes from /api/* with the
 * operator token the page keeps in sessionStorage.
 */
const FILES: Record<string, { file: string; type: string }> = {
  '/': { file: 'index.html', type: 'text/html; charset=utf-8' },
  '/assets/app.css': { file: 'app.css', type: 'text/css; charset=utf-8' },
  '/assets/app.js': { file: 'app.js', type: 'text/javascript; charset=utf-8' },
  '/assets/api.js': { file: 'api.js', type: 'text/javascript; charset=utf-8' },
  '/assets/dom.js': { file: 'dom.js', type: 'text/javascript; charset=utf-8' },
  '/assets/overview.js': { file: 'overview.js', type: 'text/javascript; charset=utf-8' },
  '/assets/discrepancies.js': { file: 'discrepancies.js', type: 'text/javascript; charset=utf-8' },
  '/assets/payouts.js': { file: 'payouts.js', type: 'text/javascript; charset=utf-8' },
  '/assets/invoices.js': { file: 'invoices.js', type: 'text/javascript; charset=utf-8' },
  '/assets/format.js': { file: 'format.js', type: 'text/javascript; charset=utf-8' },
  '/assets/upload.js': { file: 'upload.js', type: 'text/javascript; charset=utf-8' },
  // Named by index.html, so the browser does not ask for /favicon.ico (a 404 in its console).
  '/assets/icon.svg': { file: 'icon.svg', type: 'image/svg+xml' },
};

const SECURITY_HEADERS = {
  'content-security-policy':
    "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self'; connect-src 'self'; base-uri 'none'; form-action 'self'; frame-ancestors 'none'",
  'x-content-type-options': 'nosniff',
  'referrer-policy': 'no-referrer',
  // Revalidate every time: a deploy must never leave a page talking to an API it predates.
  'cache-control': 'no-cache',
};

export function pageRoutes(webDir: URL = packageFile('web/')): Route[] {
  return Object.entries(FILES).map(([path, { file, type }]) => {
    const body = readFileSync(fileURLToPath(new URL(file, webDir)));
    return {
      method: 'GET',
      path,
      handler: (_req, res) => {
        res.writeHead(200, { 'content-type': type, 'content-length': body.length, ...SECURITY_HEADERS });
        res.end(body);
      },
    } satisfies Route;
  });
}
