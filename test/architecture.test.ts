import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import ts from 'typescript';
import { describe, expect, it } from 'vitest';

/**
 * The import graph of src/, read with the TypeScript compiler's own parser (every import and
 * export-from, type-only ones included: a type circle still couples two modules).
 */
const SRC = path.resolve(import.meta.dirname, '..', 'src');

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

const graph = new Map(files(SRC).map((f) => [f, importsOf(f)]));
const rel = (f: string) => path.relative(SRC, f);
const folderOf = (f: string) => rel(f).split(path.sep)[0]!;

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

describe('the import graph of src/', () => {
  it('resolves every relative import to a file', () => {
    const missing = [...graph].flatMap(([f, deps]) => deps.filter((d) => !graph.has(d)).map((d) => `${rel(f)} -> ${rel(d)}`));
    expect(missing).toEqual([]);
  });

  it('has no import circle', () => {
    expect(cycles()).toEqual([]);
  });

  it('has no import from a lower layer to a higher one', () => {
    // The composition root and the commands sit on top; the product's capabilities never import them.
    const top = new Set(['cli.ts', 'daemon.ts', 'commands']);
    const wrong = [...graph].flatMap(([f, deps]) =>
      top.has(folderOf(f)) ? [] : deps.filter((d) => top.has(folderOf(d))).map((d) => `${rel(f)} -> ${rel(d)}`),
    );
    expect(wrong).toEqual([]);
  });
});
