import { describe, expect, it } from "vitest";
import type { InboxItem } from "../api/types";
import { applyInboxMessage, inbox, nextWaiting, waitingWorkspaces } from "../state/inbox";

function item(id: string, workspaceId: string, since: number): InboxItem {
  return {
    id,
    kind: "approval",
    workspaceId,
    workspaceName: workspaceId,
    project: "/p",
    parentId: null,
    summary: "approve bash: ls",
    since,
    seq: 1,
    actions: ["once", "deny"],
    detail: {},
  };
}

describe("the attention inbox", () => {
  it("follows the snapshot, then additions and removals, oldest first", () => {
    applyInboxMessage({ type: "inbox", items: [item("b", "w2", 20), item("a", "w1", 10)] });
    expect(inbox.get().available).toBe(true);
    expect(inbox.get().items.map((i) => i.id)).toEqual(["a", "b"]);
    applyInboxMessage({ type: "inbox-added", item: item("c", "w1", 30) });
    applyInboxMessage({ type: "inbox-added", item: item("c", "w1", 30) }); // sent twice: kept once
    expect(inbox.get().items.map((i) => i.id)).toEqual(["a", "b", "c"]);
    applyInboxMessage({ type: "inbox-removed", id: "a", workspaceId: "w1" });
    applyInboxMessage({ type: "inbox-removed", id: "zzz", workspaceId: "w1" });
    expect(inbox.get().items.map((i) => i.id)).toEqual(["b", "c"]);
  });

  it("jumps through the waiting workspaces, oldest first, each once, round and round", () => {
    const items = [item("a", "w1", 10), item("b", "w2", 20), item("c", "w1", 30)];
    expect(waitingWorkspaces(items)).toEqual(["w1", "w2"]);
    expect(nextWaiting(items, null)).toBe("w1");
    expect(nextWaiting(items, "elsewhere")).toBe("w1");
    expect(nextWaiting(items, "w1")).toBe("w2");
    expect(nextWaiting(items, "w2")).toBe("w1");
    expect(nextWaiting([], "w1")).toBeNull();
  });
});
