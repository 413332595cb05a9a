import { existsSync } from 'node:fs';

/**
 * The package's root folder (where package.json, migrations/ and web/ sit), found by walking up
 * from this module: the sources run from src/package and the build from dist/src/package, so no fixed
 * number of `../` fits both.
 */
export function packageFile(relative: string): URL {
  root ??= findRoot();
  return new URL(relative, root);
}

let root: URL | undefined;

function findRoot(): URL {
  let dir = new URL('./', import.meta.url);
  for (;;) {
    if (existsSync(new URL('package.json', dir))) return dir;
    const parent = new URL('../', dir);
    if (parent.href === dir.href) throw new Error(`no package.json above ${import.meta.url}`);
    dir = parent;
  }
}
