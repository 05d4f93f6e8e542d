import { describe, expect, it } from "vitest";
import {
  applyEvents,
  applyPartial,
  applyTailPage,
  contextTokens,
  emptyTranscript,
  lastUserText,
  prependPage,
  resetInFlight,
} from "../state/transcript";
import { assistant, result, turnEnd, turnStart, user } from "./events";

describe("transcript projection", () => {
  it("streams deltas into the in-flight message and replaces them with the commit", () => {
    let t = applyEvents(emptyTranscript(), [turnStart(1), user(2, "hi")]);
    t = applyEvents(t, [{ type: "step-start", step: 1, turn_id: "t1" }, { type: "text-delta", text: "Hel" }]);
    t = applyEvents(t, [{ type: "text-delta", text: "lo" }, { type: "reasoning-delta", text: "hmm" }]);
    expect(t.partial).toEqual({ text: "Hello", reasoning: "hmm", toolCalls: [] });
    t = applyEvents(t, [assistant(3, "Hello")]);
    expect(t.partial).toBeNull();
    expect(t.rows.map((r) => r.kind)).toEqual(["user", "assistant"]);
    expect(t.turnOpen).toBe(true);
    t = applyEvents(t, [turnEnd(4)]);
    expect(t.turnOpen).toBe(false);
    expect(t.lastSeq).toBe(4);
  });

  it("ignores committed events it has already applied (backlog overlapping a page)", () => {
    const page = [turnStart(1), user(2, "hi"), assistant(3, "a")];
    let t = applyTailPage(emptyTranscript(), page, false);
    const before = t.rows;
    t = applyEvents(t, [user(2, "hi"), assistant(3, "a")]);
    expect(t.rows).toBe(before);
    t = applyEvents(t, [turnEnd(4)]);
    expect(t.rows).toHaveLength(3);
  });

  it("attaches tool results to their call and tracks running calls", () => {
    let t = applyEvents(emptyTranscript(), [turnStart(1), user(2, "x"), assistant(3, "", [{ id: "c1", name: "bash" }])]);
    t = applyEvents(t, [{ type: "tool-call", call_id: "c1", name: "bash", arguments: {} }]);
    expect(t.running.has("c1")).toBe(true);
    const untouched = t.rows[0];
    t = applyEvents(t, [result(4, "c1", "done")]);
    expect(t.running.has("c1")).toBe(false);
    const row = t.rows[1];
    expect(row?.kind === "assistant" && row.results.c1?.output).toBe("done");
    expect(t.rows[0]).toBe(untouched); // unchanged rows keep their identity
  });

  it("builds streaming tool calls from start and delta events", () => {
    let t = applyEvents(emptyTranscript(), [turnStart(1)]);
    t = applyEvents(t, [
      { type: "tool-call-start", index: 0, call_id: "c1", name: "bash" },
      { type: "tool-call-delta", index: 0, call_id: "c1", arguments: '{"scr' },
      { type: "tool-call-delta", index: 0, call_id: "c1", arguments: 'ipt":"ls"}' },
    ]);
    expect(t.partial?.toolCalls).toEqual([{ id: "c1", name: "bash", arguments: '{"script":"ls"}' }]);
    t = applyEvents(t, [{ type: "discard-partial" }]);
    expect(t.partial).toBeNull();
  });

  it("replaces the in-flight message with the server's partial after a resubscribe", () => {
    let t = applyEvents(emptyTranscript(), [turnStart(1), { type: "text-delta", text: "stale" }]);
    t = resetInFlight(t);
    expect(t.partial).toBeNull();
    t = applyPartial(t, { text: "so far", reasoning: "", tool_calls: [] });
    t = applyEvents(t, [{ type: "text-delta", text: " and more" }]);
    expect(t.partial?.text).toBe("so far and more");
  });

  it("prepends older pages and matches results that arrived before their call", () => {
    // The newest page starts with the result of a call made in the older page.
    let t = applyTailPage(emptyTranscript(), [result(4, "c1", "old result"), turnEnd(5, "error")], true);
    expect(t.orphans.has("c1")).toBe(true);
    const endRow = t.rows[0];
    expect(endRow?.kind === "turn-end" && endRow.prompt).toBeNull();
    t = prependPage(t, [turnStart(1), user(2, "do it"), assistant(3, "", [{ id: "c1", name: "bash" }])], false);
    expect(t.rows.map((r) => r.kind)).toEqual(["user", "assistant", "turn-end"]);
    const a = t.rows[1];
    expect(a?.kind === "assistant" && a.results.c1?.output).toBe("old result");
    const end = t.rows[2];
    expect(end?.kind === "turn-end" && end.prompt).toBe("do it"); // retry knows the prompt now
    expect(t.firstSeq).toBe(1);
    expect(t.hasOlder).toBe(false);
    expect(t.lastSeq).toBe(5);
  });

  it("remembers each turn's prompt for retry, across separate deliveries", () => {
    let t = applyEvents(emptyTranscript(), [turnStart(1, "a")]);
    t = applyEvents(t, [user(2, "first prompt")]);
    t = applyEvents(t, [user(3, "queued later")]);
    t = applyEvents(t, [turnEnd(4, "error", "a")]);
    const end = t.rows[t.rows.length - 1];
    expect(end?.kind === "turn-end" && end.prompt).toBe("first prompt");
    expect(lastUserText(t)).toBe("queued later");
  });

  it("reports the newest prompt size as the context in use", () => {
    const t = applyEvents(emptyTranscript(), [turnStart(1), user(2, "x"), assistant(3, "a"), assistant(4, "b")]);
    expect(contextTokens(t.rows)).toBe(104);
  });
});
