import { describe, expect, it } from "vitest";
import type { ModelFallbackEvent } from "../api/types";
import { applyEvents, emptyTranscript } from "../state/transcript";
import { assistant, turnStart, user } from "./events";

function fallback(seq: number): ModelFallbackEvent {
  return {
    type: "model-fallback",
    seq,
    ts: seq,
    turn_id: "t1",
    step: 1,
    from_model: "anthropic:claude-sonnet-5-5",
    to_model: "anthropic:claude-sonnet-5",
    message: "anthropic:claude-sonnet-5-5 refused (cyber); continued with anthropic:claude-sonnet-5",
    text: "I can't help with that.",
    category: "cyber",
  };
}

describe("model fallback", () => {
  it("drops the refused reply that streamed and shows one line about the switch", () => {
    let t = applyEvents(emptyTranscript(), [turnStart(1), user(2, "hi")]);
    t = applyEvents(t, [{ type: "step-start", step: 1, turn_id: "t1" }, { type: "text-delta", text: "I can't help" }]);
    expect(t.partial?.text).toBe("I can't help");
    t = applyEvents(t, [fallback(3)]);
    expect(t.partial).toBeNull();
    const row = t.rows[t.rows.length - 1];
    expect(row).toMatchObject({ kind: "notice", tone: "advisory", seq: 3 });
    expect(row?.kind === "notice" ? row.text : "").toContain("refused (cyber); continued with anthropic:claude-sonnet-5");
    t = applyEvents(t, [{ type: "text-delta", text: "Sure" }, assistant(4, "Sure")]);
    expect(t.rows.map((r) => r.kind)).toEqual(["user", "notice", "assistant"]);
    expect(t.turnOpen).toBe(true);
  });
});
