// How many replies each workspace has committed since the page loaded. The costs panel follows
// it, so tokens and cost grow step by step during a turn instead of at its end.

import type { EngineEvent } from "../api/types";
import { Store } from "../lib/store";

export const replies = new Store<Readonly<Record<string, number>>>({});

/** Count the committed replies (`assistant-message`) among events of a workspace. */
export function noteReplies(workspaceId: string, events: readonly EngineEvent[]): void {
  const n = events.filter((e) => e.type === "assistant-message").length;
  if (n === 0) return;
  replies.set((all) => ({ ...all, [workspaceId]: (all[workspaceId] ?? 0) + n }));
}
