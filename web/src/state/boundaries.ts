// Wording and rules of context boundaries and goals in the transcript (docs/compaction.md).

import type { GoalInfo } from "../api/types";
import type { AssistantRow } from "./transcript";

/** The note a goal frame becomes. */
export function goalText(goal: Pick<GoalInfo, "objective" | "status" | "reason">): string {
  switch (goal.status) {
    case "active":
      return `Goal: ${goal.objective}`;
    case "complete":
      return `Goal complete: ${goal.objective}`;
    case "cleared":
      return `Goal cleared: ${goal.objective}`;
    case "budget_limited":
      return `Goal budget spent, wrapping up: ${goal.objective}`;
    default:
      return `Goal stopped${goal.reason ? ` (${goal.reason.replaceAll("_", " ")})` : ""}: ${goal.objective}`;
  }
}

/** Whether Start Here can restart the context from this reply: a finished reply with text and
 * no tool calls (the server checks again). */
export function startsHere(row: AssistantRow): boolean {
  return row.toolCalls.length === 0 && row.text.trim() !== "" && !["interrupted", "compaction", "budget"].includes(row.finishReason);
}
