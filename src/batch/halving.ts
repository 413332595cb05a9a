/**
 * Writes a batch, and when its statement fails, halves it until the item at fault is alone: about
 * 2 log2(n) statements for one bad item among n, where writing every neighbour singly takes n, so
 * one bad item costs its neighbours little. The item at fault goes to `alone` with its error,
 * which gives its result (the receiver and reparse store it unparsed) or throws to fail the whole
 * batch. An error `passOn` accepts (the database unavailable: every half would fail alike) is
 * thrown at once, without halving.
 */
export async function writeHalving<T, R>(
  items: readonly T[],
  options: {
    write: (items: readonly T[]) => Promise<readonly R[]>;
    alone: (item: T, error: unknown) => Promise<R>;
    passOn?: (error: unknown) => boolean;
    /** Called before a failed batch of `size` items is halved. */
    onHalve?: (size: number, error: unknown) => void;
  },
): Promise<R[]> {
  try {
    return [...(await options.write(items))];
  } catch (error) {
    if (options.passOn?.(error)) throw error;
    if (items.length === 1) return [await options.alone(items[0] as T, error)];
    options.onHalve?.(items.length, error);
    const half = Math.ceil(items.length / 2);
    return [...(await writeHalving(items.slice(0, half), options)), ...(await writeHalving(items.slice(half), options))];
  }
}
