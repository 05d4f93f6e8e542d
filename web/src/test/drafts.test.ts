import { describe, expect, it } from "vitest";
import { createDraftStore, MAX_STORED_CHARS } from "../lib/drafts";

class MemoryStorage {
  items = new Map<string, string>();
  full = false;
  getItem(k: string): string | null {
    return this.items.get(k) ?? null;
  }
  setItem(k: string, v: string): void {
    if (this.full) throw new Error("QuotaExceededError");
    this.items.set(k, v);
  }
  removeItem(k: string): void {
    this.items.delete(k);
  }
  key(i: number): string | null {
    return [...this.items.keys()][i] ?? null;
  }
  get length(): number {
    return this.items.size;
  }
}

describe("drafts", () => {
  it("keeps each workspace's draft across page loads", () => {
    const storage = new MemoryStorage();
    createDraftStore(storage).set("a", "half a thought");
    createDraftStore(storage).set("b", "another");
    const later = createDraftStore(storage); // a reload: a new page, the same storage
    expect(later.get("a")).toBe("half a thought");
    expect(later.get("b")).toBe("another");
    expect(later.get("c")).toBe("");
  });

  it("forgets a sent or deleted draft", () => {
    const storage = new MemoryStorage();
    const d = createDraftStore(storage);
    d.set("a", "x");
    d.set("a", "");
    d.set("b", "y");
    d.remove("b");
    expect(storage.items.size).toBe(0);
    expect(createDraftStore(storage).get("a")).toBe("");
  });

  it("clears every draft, and only drafts, on sign-out", () => {
    const storage = new MemoryStorage();
    storage.items.set("other.app.key", "keep");
    const d = createDraftStore(storage);
    d.set("a", "x");
    d.set("b", "y");
    d.clear();
    expect([...storage.items.keys()]).toEqual(["other.app.key"]);
    expect(d.get("a")).toBe("");
  });

  it("keeps drafts in memory when storage fails or is missing", () => {
    const storage = new MemoryStorage();
    storage.full = true;
    const d = createDraftStore(storage);
    d.set("a", "kept anyway");
    expect(d.get("a")).toBe("kept anyway");
    const none = createDraftStore(null);
    none.set("a", "memory only");
    expect(none.get("a")).toBe("memory only");
  });

  it("does not store huge drafts, nor let an older stored one come back", () => {
    const storage = new MemoryStorage();
    const d = createDraftStore(storage);
    d.set("a", "short");
    d.set("a", "x".repeat(MAX_STORED_CHARS + 1));
    expect(d.get("a").length).toBe(MAX_STORED_CHARS + 1);
    expect(createDraftStore(storage).get("a")).toBe("");
  });
});
