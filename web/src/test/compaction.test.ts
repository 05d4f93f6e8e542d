import { describe, expect, it } from "vitest";
import type { EngineEvent } from "../api/types";
import { snapThreshold } from "../components/ContextBar";
import {
  applyEvents,
  applyTailPage,
  contextTokens,
  emptyTranscript,
  prependPage,
  startsHere,
  type AssistantRow,
} from "../state/transcript";
import { user } from "./events";

const reply = (seq: number, text: string, finish = "stop"): EngineEvent => ({
  type: "assistant-message",
  seq,
  text,
  reasoning: "",
  tool_calls: [],
  finish_reason: finish,
  usage: { input_tokens: 500, output_tokens: 1, cache_read_tokens: 0, cache_write_tokens: 0, reasoning_tokens: 0 },
});

describe("context boundaries in the transcript", () => {
  it("shows a compaction in progress, then its summary card", () => {
    let t = applyEvents(emptyTranscript(), [user(1, "hi"), reply(2, "hello")]);
    t = applyEvents(t, [
      { type: "turn-start", seq: 3, turn_id: "c", kind: "compaction" },
      { type: "compaction-start", seq: 4, turn_id: "c", trigger: "manual", model: "m" },
    ]);
    expect(t.compacting).toBe("manual");
    t = applyEvents(t, [
      { type: "compaction", seq: 5, summary: "SUMMARY", trigger: "manual", model: "m" },
      { type: "turn-end", seq: 6, turn_id: "c", reason: "completed" },
    ]);
    expect(t.compacting).toBeNull();
    const card = t.rows.find((r) => r.kind === "compaction");
    expect(card).toMatchObject({ kind: "compaction", summary: "SUMMARY", trigger: "manual", seq: 5 });
    // The context size of the last reply no longer applies after the boundary.
    expect(contextTokens(t.rows)).toBeNull();
  });

  it("a failed compaction ends the in-progress state with the turn", () => {
    let t = applyEvents(emptyTranscript(), [
      { type: "compaction-start", seq: 1, trigger: "auto" },
      { type: "turn-end", seq: 2, turn_id: "c", reason: "error", error: { code: "x", message: "boom" } },
    ]);
    expect(t.compacting).toBeNull();
    t = applyEvents(t, [user(3, "again")]);
    expect(t.rows.map((r) => r.kind)).toEqual(["turn-end", "user"]);
  });

  it("a hard clear empties the chat and stops older pages; a soft one keeps it", () => {
    let t = applyTailPage(emptyTranscript(), [user(10, "old"), reply(11, "older reply")], true);
    t = applyEvents(t, [{ type: "context-reset", seq: 12, reason: "clear" }]);
    expect(t.rows.map((r) => r.kind)).toEqual(["user", "assistant", "notice"]);
    expect(t.hasOlder).toBe(true);
    t = applyEvents(t, [{ type: "context-reset", seq: 13, reason: "clear", hard: true }, user(14, "new")]);
    expect(t.rows.map((r) => r.kind)).toEqual(["notice", "user"]);
    expect(t.hasOlder).toBe(false);
    const again = prependPage(t, [user(1, "ancient")], false);
    expect(again.rows).toBe(t.rows);
    // A first page that contains a hard clear starts after it.
    const fresh = applyTailPage(
      emptyTranscript(),
      [user(1, "gone"), { type: "context-reset", seq: 2, reason: "clear", hard: true }, user(3, "kept")],
      true,
    );
    expect(fresh.rows.map((r) => (r.kind === "user" ? r.text : r.kind))).toEqual(["notice", "kept"]);
    expect(fresh.hasOlder).toBe(false);
  });

  it("goal frames and continuations are notices", () => {
    const t = applyEvents(emptyTranscript(), [
      { type: "goal", seq: 1, goal: { goalId: "g", objective: "ship", status: "active" } },
      { type: "user-message", seq: 2, text: "<goal-continuation>...", synthetic: true, kind: "goal_continuation" },
      { type: "goal", seq: 3, goal: { goalId: "g", objective: "ship", status: "incomplete", reason: "goal_turns" } },
    ]);
    expect(t.rows.map((r) => (r.kind === "notice" ? r.text : r.kind))).toEqual([
      "Goal: ship",
      "The goal continues: an automatic turn.",
      "Goal stopped (goal turns): ship",
    ]);
  });

  it("Start Here is offered on finished replies only", () => {
    const t = applyEvents(emptyTranscript(), [reply(1, "final"), reply(2, "cut", "compaction"), reply(3, "  ")]);
    const rows = t.rows as AssistantRow[];
    expect(rows.map(startsHere)).toEqual([true, false, false]);
  });

  it("snaps the threshold as the server applies it", () => {
    expect([0, 1, 70.4, 90, 93, 95, 100].map(snapThreshold)).toEqual([1, 1, 70, 90, 90, 100, 100]);
  });
});
