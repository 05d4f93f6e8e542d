// What each workspace's event stream has committed since the page loaded: replies, turn ends and
// the rows that change what the model's context holds. Panels follow these counts: the costs
// panel after each reply (tokens and cost grow step by step during a turn), the Context figure
// after each context row (it follows a running turn), the header's branch after each turn end. They come from committed
// events, which are never coalesced, unlike statuses (a short turn can go from idle to idle).

import type { EngineEvent } from "../api/types";
import { Store } from "../lib/store";

export interface Activity {
  replies: number;
  turnEnds: number;
  /** Rows that change the context: messages, tool results, boundaries. */
  contextRows: number;
}

export const activity = new Store<Readonly<Record<string, Activity>>>({});

const NONE: Activity = { replies: 0, turnEnds: 0, contextRows: 0 };

const CONTEXT_ROWS = new Set(["user-message", "assistant-message", "tool-result", "compaction", "context-reset"]);

export function activityOf(all: Readonly<Record<string, Activity>>, workspaceId: string): Activity {
  return all[workspaceId] ?? NONE;
}

/** Count the committed replies (`assistant-message`), turn ends and context rows among a
 * workspace's events. */
export function noteActivity(workspaceId: string, events: readonly EngineEvent[]): void {
  let replies = 0;
  let turnEnds = 0;
  let contextRows = 0;
  for (const e of events) {
    if (e.type === "assistant-message") replies += 1;
    else if (e.type === "turn-end") turnEnds += 1;
    if (CONTEXT_ROWS.has(e.type)) contextRows += 1;
  }
  if (replies === 0 && turnEnds === 0 && contextRows === 0) return;
  activity.set((all) => {
    const cur = activityOf(all, workspaceId);
    return {
      ...all,
      [workspaceId]: {
        replies: cur.replies + replies,
        turnEnds: cur.turnEnds + turnEnds,
        contextRows: cur.contextRows + contextRows,
      },
    };
  });
}
