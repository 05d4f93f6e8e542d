import { describe, expect, it } from "vitest";
import { BACKOFF_MAX_MS, backoffDelay, SubscriptionBook } from "../lib/reconnect";

describe("backoff", () => {
  it("grows exponentially, stays within [half, full] of the step, and is capped", () => {
    expect(backoffDelay(0, () => 0)).toBe(125);
    expect(backoffDelay(0, () => 1)).toBe(250);
    expect(backoffDelay(3, () => 0)).toBe(1000);
    expect(backoffDelay(3, () => 1)).toBe(2000);
    for (let i = 0; i < 40; i++) expect(backoffDelay(i, () => 1)).toBeLessThanOrEqual(BACKOFF_MAX_MS);
    expect(backoffDelay(40, () => 0)).toBe(BACKOFF_MAX_MS / 2);
  });
});

describe("subscription bookkeeping", () => {
  it("resumes every subscription after the last seq seen", () => {
    const book = new SubscriptionBook();
    book.subscribe("a", 10);
    book.subscribe("b", 0);
    expect(book.noteSeq("a", 11)).toBe(true);
    expect(book.noteSeq("a", 12)).toBe(true);
    expect(book.noteSeq("b", 1)).toBe(true);
    expect(book.resubscribeAll()).toEqual([
      { type: "subscribe", workspaceId: "a", afterSeq: 12 },
      { type: "subscribe", workspaceId: "b", afterSeq: 1 },
    ]);
  });

  it("drops duplicates and events of workspaces it does not follow", () => {
    const book = new SubscriptionBook();
    book.subscribe("a", 5);
    expect(book.noteSeq("a", 5)).toBe(false);
    expect(book.noteSeq("a", 3)).toBe(false);
    expect(book.noteSeq("z", 1)).toBe(false);
    expect(book.noteSeq("a", 6)).toBe(true);
  });

  it("never moves a subscription backwards, and forgets unsubscribed workspaces", () => {
    const book = new SubscriptionBook();
    book.subscribe("a", 20);
    expect(book.subscribe("a", 7)).toEqual({ type: "subscribe", workspaceId: "a", afterSeq: 20 });
    expect(book.resync("a")).toEqual({ type: "subscribe", workspaceId: "a", afterSeq: 20 });
    expect(book.unsubscribe("a")).toEqual({ type: "unsubscribe", workspaceId: "a" });
    expect(book.unsubscribe("a")).toBeNull();
    expect(book.resync("a")).toBeNull();
    expect(book.resubscribeAll()).toEqual([]);
  });
});
