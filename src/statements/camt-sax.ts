import { SaxesParser } from 'saxes';
import { excerpt, StatementFormatError } from './types.js';
import type { Node } from './camt-xml.js';

// Elements that may repeat: always arrays, as camt-xml.ts's readers expect.
const ARRAYS = new Set(['Stmt', 'Ntry', 'NtryDtls', 'TxDtls', 'Ustrd', 'Bal']);

interface Frame {
  name: string;
  node: Node;
  text: string;
  /** the node holds attributes or children (else the element's value is its text) */
  attributes: boolean;
  children: boolean;
}

export interface TreeHandlers {
  /** an element opened, with the names of the open elements above it (outermost first) */
  open?(name: string, path: readonly string[]): void;
  /**
   * An element closed, with its subtree in fast-xml-parser's shape (namespace prefixes removed,
   * attributes as '@_name', text as a string or '#text', values never converted), and its parent
   * as far as it has been read (the elements before it). Returning true
   * keeps the subtree out of its parent: the caller has used it, so a statement's entries are
   * handled one by one and never all held at once.
   */
  close(name: string, value: unknown, path: readonly string[], parent: Node | undefined): boolean;
}

/**
 * A streaming XML reader that builds the subtree of each element as it closes, so the statement
 * readers use one set of accessors (camt-xml.ts) whether they see a whole document or one entry of
 * a 1 GB file. XML that is not well-formed throws StatementFormatError.
 */
export function xmlTreeReader(handlers: TreeHandlers): { write(text: string): void; end(): void } {
  const parser = new SaxesParser({ xmlns: false, position: true });
  const stack: Frame[] = [];
  const path: string[] = [];
  parser.on('error', (error) => {
    // saxes names the line and column; a message about a megabyte-long name is cut (types.ts excerpt).
    throw new StatementFormatError(`not well-formed XML: ${excerpt(error.message, 200)}`);
  });
  // Element names as one string each: saxes slices a new string per tag, and a property key that
  // is a new string is looked up in V8's string table on every read and write of the tree. The
  // parent's property lookup by such a name was the tree's hottest line (7 % of the reader's CPU
  // samples); with the names kept, and one frame per depth below, the tree of 100,000 entries took
  // 1.93 s against 2.14 s (bench/README.md, statements).
  const names = new Map<string, string>();
  let depth = 0;
  parser.on('opentag', (tag) => {
    const raw = tag.name;
    let name = names.get(raw);
    if (name === undefined) {
      name = raw.slice(raw.indexOf(':') + 1);
      // Bounded in count and length: a document of made-up names must not fill it (the schema's
      // names are fewer and shorter).
      if (names.size < 512 && raw.length <= 64) names.set(raw, name);
    }
    const node: Node = {};
    let attributes = false;
    // for...in, not Object.entries: the arrays Object.entries makes for every element (most have no
    // attributes at all) were the reader's single hottest line, a tenth of its CPU time.
    for (const key in tag.attributes) {
      if (key === 'xmlns' || key.startsWith('xmlns:')) continue;
      node[`@_${key.slice(key.indexOf(':') + 1)}`] = tag.attributes[key];
      attributes = true;
    }
    handlers.open?.(name, path);
    // One frame object per depth, reused, not one per element: the tree's nodes are garbage enough.
    const frame = stack[depth];
    if (frame === undefined) stack.push({ name, node, text: '', attributes, children: false });
    else {
      frame.name = name;
      frame.node = node;
      frame.text = '';
      frame.attributes = attributes;
      frame.children = false;
    }
    depth += 1;
    path.push(name);
  });
  const onText = (text: string): void => {
    if (depth > 0) stack[depth - 1]!.text += text;
  };
  parser.on('text', onText);
  parser.on('cdata', onText);
  parser.on('closetag', () => {
    depth -= 1;
    const frame = stack[depth]!;
    path.pop();
    const text = frame.text === '' ? '' : frame.text.trim();
    let value: unknown;
    if (frame.attributes || frame.children) {
      if (text !== '') frame.node['#text'] = text;
      value = frame.node;
    } else value = text;
    const top = depth > 0 ? stack[depth - 1] : undefined;
    if (handlers.close(frame.name, value, path, top?.node) || !top) return;
    const parent = top.node;
    top.children = true;
    const existing = parent[frame.name];
    if (Array.isArray(existing)) existing.push(value);
    else if (ARRAYS.has(frame.name)) parent[frame.name] = [value];
    else parent[frame.name] = existing === undefined ? value : [existing, value];
  });
  return {
    write(text) {
      parser.write(text);
    },
    end() {
      parser.close();
    },
  };
}
