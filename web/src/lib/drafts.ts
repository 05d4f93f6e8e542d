// Unsent composer text, per workspace, kept in the browser's localStorage so a reload, a
// dropped connection or a trip to the sign-in page loses nothing. Storage can be missing or
// full (private windows, quotas): the drafts then live in memory for this page only.

const PREFIX = "xum.draft.";
/** Longer drafts stay in memory only (localStorage quotas are a few MiB for the whole origin). */
export const MAX_STORED_CHARS = 200_000;

export interface DraftStore {
  get(workspaceId: string): string;
  set(workspaceId: string, text: string): void;
  remove(workspaceId: string): void;
  /** Forget every draft (signing out on purpose). */
  clear(): void;
}

type Storage = Pick<globalThis.Storage, "getItem" | "setItem" | "removeItem" | "key" | "length">;

export function createDraftStore(storage: Storage | null): DraftStore {
  const memory = new Map<string, string>();
  const key = (id: string) => PREFIX + id;
  return {
    get(id) {
      const kept = memory.get(id);
      if (kept !== undefined) return kept;
      try {
        return storage?.getItem(key(id)) ?? "";
      } catch {
        return "";
      }
    },
    set(id, text) {
      memory.set(id, text);
      try {
        if (text === "") storage?.removeItem(key(id));
        else if (text.length <= MAX_STORED_CHARS) storage?.setItem(key(id), text);
        else storage?.removeItem(key(id)); // an older, shorter version must not come back
      } catch {
        // Quota or a disabled storage: the memory copy still holds it.
      }
    },
    remove(id) {
      memory.delete(id);
      try {
        storage?.removeItem(key(id));
      } catch {
        // nothing kept there
      }
    },
    clear() {
      memory.clear();
      try {
        const keys: string[] = [];
        for (let i = 0; storage && i < storage.length; i++) {
          const k = storage.key(i);
          if (k?.startsWith(PREFIX)) keys.push(k);
        }
        for (const k of keys) storage?.removeItem(k);
      } catch {
        // nothing kept there
      }
    },
  };
}

function browserStorage(): Storage | null {
  try {
    return typeof localStorage === "undefined" ? null : localStorage;
  } catch {
    return null; // access itself can throw (storage blocked)
  }
}

export const drafts: DraftStore = createDraftStore(browserStorage());
