/** A binary min-heap ordered by (at, seq): equal times keep insertion order, so runs are reproducible. */
export interface Timed {
  at: number;
  seq: number;
}

export class TimedHeap<T extends Timed> {
  private readonly items: T[] = [];

  get size(): number {
    return this.items.length;
  }

  peek(): T | undefined {
    return this.items[0];
  }

  push(item: T): void {
    const items = this.items;
    items.push(item);
    let i = items.length - 1;
    while (i > 0) {
      const parent = (i - 1) >> 1;
      if (!before(items[i] as T, items[parent] as T)) break;
      [items[i], items[parent]] = [items[parent] as T, items[i] as T];
      i = parent;
    }
  }

  pop(): T | undefined {
    const items = this.items;
    const top = items[0];
    const last = items.pop();
    if (items.length > 0 && last !== undefined) {
      items[0] = last;
      let i = 0;
      for (;;) {
        const l = 2 * i + 1;
        const r = l + 1;
        let m = i;
        if (l < items.length && before(items[l] as T, items[m] as T)) m = l;
        if (r < items.length && before(items[r] as T, items[m] as T)) m = r;
        if (m === i) break;
        [items[i], items[m]] = [items[m] as T, items[i] as T];
        i = m;
      }
    }
    return top;
  }
}

function before(a: Timed, b: Timed): boolean {
  return a.at < b.at || (a.at === b.at && a.seq < b.seq);
}
