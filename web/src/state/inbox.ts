// The attention inbox (docs/inbox.md): what waits for a person across every workspace, kept as
// the server tells it over the socket (a snapshot after hello, then each item added or removed),
// answered in place through `/api/inbox/{id}/...`. An answer given anywhere else reaches this
// list as an `inbox-removed`, so nothing here guesses what is gone.

import { api } from "../api/http";
import type { InboxItem, InboxMessage } from "../api/types";
import { Store } from "../lib/store";

export interface InboxState {
  /** The server sent its inbox (an older server has none: the panel stays hidden). */
  available: boolean;
  items: InboxItem[];
  open: boolean;
}

export const inbox = new Store<InboxState>({ available: false, items: [], open: false });

function sorted(items: InboxItem[]): InboxItem[] {
  return [...items].sort((a, b) => a.since - b.since || (a.id < b.id ? -1 : a.id > b.id ? 1 : 0));
}

export function applyInboxMessage(msg: InboxMessage): void {
  inbox.set((s) => {
    switch (msg.type) {
      case "inbox":
        return { ...s, available: true, items: sorted(msg.items) };
      case "inbox-added":
        return { ...s, items: sorted([...s.items.filter((i) => i.id !== msg.item.id), msg.item]) };
      case "inbox-removed":
        if (!s.items.some((i) => i.id === msg.id)) return s;
        return { ...s, items: s.items.filter((i) => i.id !== msg.id) };
    }
    return s;
  });
}

/** The workspaces that wait, oldest item first, each once. */
export function waitingWorkspaces(items: readonly InboxItem[]): string[] {
  const out: string[] = [];
  for (const item of items) if (!out.includes(item.workspaceId)) out.push(item.workspaceId);
  return out;
}

/** The workspace to go to next: the one after `current` in `waitingWorkspaces`, else the first. */
export function nextWaiting(items: readonly InboxItem[], current: string | null): string | null {
  const order = waitingWorkspaces(items);
  if (order.length === 0) return null;
  const at = current === null ? -1 : order.indexOf(current);
  return order[(at + 1) % order.length] ?? null;
}

function path(id: string, action: string): string {
  return `/api/inbox/${encodeURIComponent(id)}/${action}`;
}

export async function approveItem(id: string, decision: "once" | "always" | "deny", reason?: string): Promise<void> {
  const body: { decision: string; reason?: string } = { decision };
  if (reason) body.reason = reason;
  await api("POST", path(id, "approve"), body);
}

export async function answerItem(id: string, answers: Record<string, string> | null): Promise<void> {
  await api("POST", path(id, "answer"), { answers });
}

export async function dismissItem(id: string): Promise<void> {
  await api("POST", path(id, "dismiss"));
}

export async function readItem(id: string): Promise<void> {
  await api("POST", path(id, "read"));
}
