import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import ts from 'typescript';
import { describe, expect, it } from 'vitest';
import { TOPICS_BY_FAMILY } from '../src/provider/vocabulary.js';

/**
 * The import graph of src/ (the product) and sim/ (the provider simulator, a developer tool shipped
 * for `demo` and `sim`), read with the TypeScript compiler's own parser (every import and
 * export-from, type-only ones included: a type circle still couples two modules).
 */
const ROOT = path.resolve(import.meta.dirname, '..');
const SRC = path.join(ROOT, 'src');
const SIM = path.join(ROOT, 'sim');

function files(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((e) =>
    e.isDirectory() ? files(path.join(dir, e.name)) : e.name.endsWith('.ts') ? [path.join(dir, e.name)] : [],
  );
}

function importsOf(file: string): string[] {
  const source = ts.createSourceFile(file, readFileSync(file, 'utf8'), ts.ScriptTarget.Latest, false);
  const out: string[] = [];
  const visit = (node: ts.Node) => {
    if ((ts.isImportDeclaration(node) || ts.isExportDeclaration(node)) && node.moduleSpecifier && ts.isStringLiteral(node.moduleSpecifier)) {
      const spec = node.moduleSpecifier.text;
      if (spec.startsWith('.')) out.push(path.resolve(path.dirname(file), spec.replace(/\.js$/, '.ts')));
    }
    if (ts.isCallExpression(node) && node.expression.kind === ts.SyntaxKind.ImportKeyword) {
      const [arg] = node.arguments;
      if (arg && ts.isStringLiteral(arg) && arg.text.startsWith('.')) out.push(path.resolve(path.dirname(file), arg.text.replace(/\.js$/, '.ts')));
    }
    ts.forEachChild(node, visit);
  };
  visit(source);
  return out;
}

const graph = new Map([...files(SRC), ...files(SIM)].map((f) => [f, importsOf(f)]));
const rel = (f: string) => path.relative(ROOT, f);
/** `src/<folder>` for the product's capabilities (or `src/cli.ts`), `sim` for the whole simulator. */
const folderOf = (f: string) => {
  const [top, second] = rel(f).split(path.sep);
  return top === 'src' ? `src/${second}` : top!;
};

/** Every cycle's files, found by Tarjan's strongly connected components. */
function cycles(): string[][] {
  let index = 0;
  const stack: string[] = [];
  const on = new Set<string>();
  const idx = new Map<string, number>();
  const low = new Map<string, number>();
  const out: string[][] = [];
  const strong = (v: string) => {
    idx.set(v, index);
    low.set(v, index);
    index += 1;
    stack.push(v);
    on.add(v);
    for (const w of graph.get(v) ?? []) {
      if (!graph.has(w)) continue;
      if (!idx.has(w)) {
        strong(w);
        low.set(v, Math.min(low.get(v)!, low.get(w)!));
      } else if (on.has(w)) low.set(v, Math.min(low.get(v)!, idx.get(w)!));
    }
    if (low.get(v) === idx.get(v)) {
      const component: string[] = [];
      let w: string;
      do {
        w = stack.pop()!;
        on.delete(w);
        component.push(rel(w));
      } while (w !== v);
      if (component.length > 1 || (graph.get(v) ?? []).includes(v)) out.push(component.sort());
    }
  };
  for (const v of graph.keys()) if (!idx.has(v)) strong(v);
  return out;
}

/** The strongly connected sets of more than one folder in a folder-to-folder import graph. */
function folderKnots(edges: Map<string, Set<string>>): string[][] {
  const reach = (from: string) => {
    const seen = new Set<string>();
    const todo = [...(edges.get(from) ?? [])];
    while (todo.length > 0) {
      const next = todo.pop()!;
      if (seen.has(next)) continue;
      seen.add(next);
      todo.push(...(edges.get(next) ?? []));
    }
    return seen;
  };
  const reaches = new Map([...edges.keys()].map((k) => [k, reach(k)]));
  const knots = new Map<string, string[]>();
  for (const a of edges.keys()) {
    const knot = [a, ...[...edges.keys()].filter((b) => b !== a && reaches.get(a)!.has(b) && reaches.get(b)!.has(a))].sort();
    if (knot.length > 1) knots.set(knot.join(' '), knot);
  }
  return [...knots.values()];
}

describe('the import graph of src/ and sim/', () => {
  it('resolves every relative import to a file', () => {
    const missing = [...graph].flatMap(([f, deps]) => deps.filter((d) => !graph.has(d)).map((d) => `${rel(f)} -> ${rel(d)}`));
    expect(missing).toEqual([]);
  });

  it('has no import circle', () => {
    expect(cycles()).toEqual([]);
  });

  it('has no import from a lower layer to a higher one', () => {
    // The composition root and the commands sit on top; the product's capabilities never import them.
    const top = new Set(['src/cli.ts', 'src/daemon', 'src/commands']);
    const wrong = [...graph].flatMap(([f, deps]) =>
      top.has(folderOf(f)) ? [] : deps.filter((d) => top.has(folderOf(d))).map((d) => `${rel(f)} -> ${rel(d)}`),
    );
    expect(wrong).toEqual([]);
  });

  it('has folders that form a tree: no two folders of src/ import each other, directly or through others', () => {
    // A file-level graph without circles can still knot its folders (a imports b's file x, b imports
    // a's file y): then no folder can be understood, tested or moved without all the others.
    const folders = new Map<string, Set<string>>();
    for (const [f, deps] of graph) {
      const from = folderOf(f);
      if (!from.startsWith('src/')) continue;
      const out = folders.get(from) ?? new Set<string>();
      for (const d of deps) if (folderOf(d) !== from && folderOf(d).startsWith('src/')) out.add(folderOf(d));
      folders.set(from, out);
    }
    expect(folderKnots(folders)).toEqual([]);
  });

  it('lets only the composition root and the commands use the context; capabilities take narrow dependencies', () => {
    // Found by what it declares, wherever it lives, so a move cannot make the check pass vacuously.
    const context = [...graph.keys()].filter((f) => /^export interface AppContext\b/m.test(readFileSync(f, 'utf8')));
    expect(context.map(rel)).toEqual([path.join('src', 'daemon', 'context.ts')]);
    const may = new Set(['src/daemon', 'src/commands', 'src/cli.ts']);
    const wrong = [...graph].flatMap(([f, deps]) => (deps.includes(context[0]!) && !may.has(folderOf(f)) ? [rel(f)] : []));
    expect(wrong).toEqual([]);
  });

  it('has no index.ts in src/: a module is imported by the name of the file that defines it', () => {
    // One rule for every folder. Barrels were a second way into some folders beside their files,
    // and re-exported names that nothing imported through them.
    const barrels = [...graph.keys()].filter((f) => f.startsWith(SRC + path.sep) && path.basename(f) === 'index.ts').map(rel);
    expect(barrels).toEqual([]);
  });

  it('names the provider\'s topics only through its vocabulary: no topic literal outside src/provider/vocabulary.ts', () => {
    // A topic written by hand in an SQL comparison compares with nothing when it is misspelt;
    // topic('…') is checked against the spec's list at compile time.
    const families = Object.keys(TOPICS_BY_FAMILY).join('|');
    const literal = new RegExp(`'(?:${families})/[a-z_]+'`);
    const vocabulary = path.join(SRC, 'provider', 'vocabulary.ts');
    const wrong = [...graph.keys()]
      .filter((f) => f.startsWith(SRC + path.sep) && f !== vocabulary)
      .flatMap((f) => readFileSync(f, 'utf8').split('\n').flatMap((line, i) => {
        const code = line.replace(/topic\('[^']*'\)/g, '').replace(/^\s*(\*|\/\/).*$/, '');
        return literal.test(code) ? [`${rel(f)}:${i + 1}: ${line.trim()}`] : [];
      }));
    expect(wrong).toEqual([]);
    // And the check sees one: a line as the rules were written before.
    expect(literal.test("where f.topic = 'factoring/approved'")).toBe(true);
  });

  it('opens every transaction through src/db/transaction.ts: postgres.js\'s own begin() ends the process when the connection dies under it', () => {
    const helper = path.join(SRC, 'db', 'transaction.ts');
    const begin = /\.begin\(/;
    const wrong = [...graph.keys()]
      .filter((f) => f.startsWith(SRC + path.sep) && f !== helper)
      .flatMap((f) => readFileSync(f, 'utf8').split('\n').flatMap((line, i) => {
        const code = line.replace(/^\s*(\*|\/\/).*$/, '');
        return begin.test(code) ? [`${rel(f)}:${i + 1}: ${line.trim()}`] : [];
      }));
    expect(wrong).toEqual([]);
    expect(begin.test('return database.sql.begin(async (tx) => {')).toBe(true);
  });

  it('keeps the simulator beside the product: only the demo and sim commands start it, and it reads no receiver, client, poller or reconciler', () => {
    // The simulator stands in for the provider; were it to share the receiver's or the poller's
    // code, a bug in that code would be mirrored in the oracle and hide from the tests.
    const simMay = new Set(['src/log', 'src/provider/vocabulary.ts']);
    const wrong = [...graph].flatMap(([f, deps]) =>
      deps
        .filter((d) => {
          const from = folderOf(f);
          const to = folderOf(d);
          if (from === 'sim') return to !== 'sim' && !simMay.has(to) && !simMay.has(rel(d).replaceAll(path.sep, '/'));
          return to === 'sim' && from !== 'src/commands';
        })
        .map((d) => `${rel(f)} -> ${rel(d)}`),
    );
    expect(wrong).toEqual([]);
  });
});
