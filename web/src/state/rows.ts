// The rows of a transcript (what `applyEvents` folds committed events into), one kind each.

import type {
  ErrorInfo,
  ImageRef,
  SearchHitRef,
  ToolCallRef,
  ToolResultEvent,
  WebSearchRef,
} from "../api/types";

export interface UserRow {
  kind: "user";
  key: string;
  seq: number;
  text: string;
  queued: boolean;
  /** Images the message carried (references; the server serves them by hash). */
  images?: ImageRef[];
}

export interface AssistantRow {
  kind: "assistant";
  key: string;
  seq: number;
  text: string;
  reasoning: string;
  toolCalls: ToolCallRef[];
  finishReason: string;
  results: Readonly<Record<string, ToolResultEvent>>;
  /** Prompt size of the request that produced this reply (cached tokens included). */
  inputTokens: number | null;
  /** The provider's own web searches in the reply, and the pages its text cites. */
  webSearches: readonly WebSearchRef[];
  citations: readonly SearchHitRef[];
}

export interface TurnEndRow {
  kind: "turn-end";
  key: string;
  seq: number;
  turnId: string;
  reason: string;
  error: ErrorInfo | null;
  /** The user text that started the turn, for "retry" (null when it is not loaded). */
  prompt: string | null;
}

export interface NoticeRow {
  kind: "notice";
  key: string;
  seq: number | null;
  tone: "advisory" | "damaged" | "boundary" | "goal" | "background";
  text: string;
}

/** A note xum added for the model (kind `context_update`: a part of the workspace's context
 * changed mid-conversation). Shown collapsed: it is not something the user wrote. */
export interface ContextNoteRow {
  kind: "context-note";
  key: string;
  seq: number;
  text: string;
  /** The parts that changed (e.g. "instructions", "plan_file"), when the event says. */
  changed: readonly string[];
}

/** A compaction boundary: the model sees `summary` from here on (Start Here included). */
export interface CompactionRow {
  kind: "compaction";
  key: string;
  seq: number;
  summary: string;
  trigger: string;
  model: string | null;
  /** Start Here: the reply or plan it restarted from. */
  sourceSeq: number | null;
}

export type Row = UserRow | AssistantRow | TurnEndRow | NoticeRow | CompactionRow | ContextNoteRow;

/** The id of the newest `propose_plan` call among `rows` that has its result, if any. */
export function latestPlanCall(rows: readonly Row[]): string | null {
  for (let i = rows.length - 1; i >= 0; i--) {
    const row = rows[i];
    if (row?.kind !== "assistant") continue;
    for (let j = row.toolCalls.length - 1; j >= 0; j--) {
      const call = row.toolCalls[j];
      if (call?.name === "propose_plan" && row.results[call.id]) return call.id;
    }
  }
  return null;
}
