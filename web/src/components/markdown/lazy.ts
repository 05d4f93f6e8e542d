/** A module loaded on first use and kept for the page's life. A load that fails (a dropped
 *  connection, a reload while the chunk was in flight) is forgotten, so the next use tries
 *  again instead of every later render failing with the same rejected promise. */
export function loadOnce<T>(load: () => Promise<T>): () => Promise<T> {
  let pending: Promise<T> | null = null;
  return () => {
    pending ??= load().catch((err: unknown) => {
      pending = null;
      throw err;
    });
    return pending;
  };
}
