/** Waits before the second and third attempt of a load that failed (a dropped connection, a
 *  server busy for a moment): a chunk is fetched again before the view falls back to text. */
export const LOAD_RETRY_DELAYS_MS = [500, 2000];

/** A module loaded on first use and kept for the page's life. A load that fails is tried again
 *  after each of `retryDelaysMs`; one that still fails is forgotten, so the next use tries again
 *  instead of every later render failing with the same rejected promise. */
export function loadOnce<T>(
  load: () => Promise<T>,
  retryDelaysMs: readonly number[] = LOAD_RETRY_DELAYS_MS,
): () => Promise<T> {
  let pending: Promise<T> | null = null;
  const attempt = async (): Promise<T> => {
    for (const delay of retryDelaysMs) {
      try {
        return await load();
      } catch {
        await new Promise((resolve) => setTimeout(resolve, delay));
      }
    }
    return load();
  };
  return () => {
    pending ??= attempt().catch((err: unknown) => {
      pending = null;
      throw err;
    });
    return pending;
  };
}
