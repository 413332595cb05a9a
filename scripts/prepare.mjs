// npm's `prepare`: builds dist/ (tsc, then build-info.mjs) unless it is already current, and skips,
// saying why, when this user cannot write it.
//
// Why not plain `tsc`: `npx bnpl-recon` in the checkout does not run node_modules/.bin. npm (11's
// libnpmexec) sees that the project's own package.json has a `bnpl-recon` bin and installs the
// checkout into the user's npx cache as a link "so that its bin links get set up"; that install runs
// this script in the checkout. Every fresh npx cache rebuilt dist/, and a user who does not own the
// checkout (tsc cannot write dist/) got exit 2 and not a word: npm hides a dependency's script output.
import { spawnSync } from 'node:child_process';
import { accessSync, constants, existsSync, readdirSync, statSync } from 'node:fs';
import { createRequire } from 'node:module';
import { userInfo } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const dist = path.join(root, 'dist');
// Written last by a build (build-info.mjs), so its time is when the build finished.
const marker = path.join(dist, 'build-info.json');
const say = (text) => process.stderr.write(`bnpl-recon prepare: ${text}\n`);

function* files(dir) {
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    const full = path.join(dir, entry.name);
    if (entry.isDirectory()) yield* files(full);
    else yield full;
  }
}

/** The newest input of tsconfig.build.json (src/, sim/ and the two tsconfigs), in ms. */
function newestInput() {
  let newest = 0;
  const inputs = [path.join(root, 'tsconfig.json'), path.join(root, 'tsconfig.build.json')];
  for (const dir of ['src', 'sim']) if (existsSync(path.join(root, dir))) inputs.push(...files(path.join(root, dir)));
  for (const file of inputs) newest = Math.max(newest, statSync(file).mtimeMs);
  return newest;
}

function current() {
  if (!existsSync(marker) || !existsSync(path.join(dist, 'src', 'cli.js'))) return false;
  return statSync(marker).mtimeMs >= newestInput();
}

/** The first path a build would have to write and this user cannot, or undefined. */
function unwritable() {
  const targets = existsSync(dist) ? [dist, ...walkAll(dist)] : [root];
  for (const target of targets) {
    try {
      accessSync(target, constants.W_OK);
    } catch {
      return target;
    }
  }
  return undefined;
}

function* walkAll(dir) {
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    const full = path.join(dir, entry.name);
    yield full;
    if (entry.isDirectory()) yield* walkAll(full);
  }
}

function run(args) {
  const result = spawnSync(process.execPath, args, { cwd: root, stdio: 'inherit' });
  if (result.error) throw result.error;
  return result.status ?? 1;
}

const user = () => {
  try {
    return userInfo().username;
  } catch {
    return `uid ${process.getuid?.()}`;
  }
};

const fresh = current();
const blocked = unwritable();
if (fresh && blocked !== undefined) {
  say('dist/ is newer than src/ and sim/: skipping the build');
} else if (fresh) {
  // Only the commit may have moved (a pull that changed no source): record it, as a build would.
  say('dist/ is newer than src/ and sim/: skipping the build, recording the commit');
  process.exit(run([path.join(root, 'scripts', 'build-info.mjs')]));
} else if (blocked !== undefined) {
  // Exit 0: a failure here fails `npx bnpl-recon` without a word; the bin says so itself when dist/ is missing.
  say(
    `dist/ is ${existsSync(marker) ? 'older than src/ or sim/' : 'missing'}, but ${user()} cannot write ${path.relative(root, blocked) || '.'}: ` +
      "skipping the build; run 'npm run build' as the checkout's owner",
  );
} else {
  const tsc = createRequire(import.meta.url).resolve('typescript/bin/tsc');
  const status = run([tsc, '-p', 'tsconfig.build.json']);
  if (status !== 0) process.exit(status);
  process.exit(run([path.join(root, 'scripts', 'build-info.mjs')]));
}
