import { describe, expect, it } from "vitest";
import type { EngineEvent } from "../api/types";
import {
  LIVE_TRIMMED,
  MAX_LIVE_CALLS,
  MAX_LIVE_CHARS,
  applyEvents,
  emptyTranscript,
  resetInFlight,
  type TranscriptState,
} from "../state/transcript";
import { result } from "./events";

const out = (callId: string, text: string, stream = "output"): EngineEvent => ({
  type: "tool-output",
  call_id: callId,
  stream,
  text,
});

function started(): TranscriptState {
  return applyEvents(emptyTranscript(), [
    { type: "turn-start", seq: 1, turn_id: "t1" },
    { type: "user-message", seq: 2, text: "run" },
    {
      type: "assistant-message",
      seq: 3,
      text: "",
      reasoning: "",
      tool_calls: [{ id: "c1", name: "bash", arguments: "{}" }],
      finish_reason: "tool_calls",
    },
    { type: "tool-call", call_id: "c1", name: "bash", arguments: {} },
  ]);
}

const texts = (t: TranscriptState, callId: string) =>
  Object.fromEntries((t.live.get(callId) ?? []).map((s) => [s.stream, s.text]));

describe("live tool output", () => {
  it("appends text per call and stream as it arrives, without touching the rows", () => {
    let t = started();
    const rows = t.rows;
    t = applyEvents(t, [out("c1", "one\n"), out("c1", "pre\n", "hook:tool_pre")]);
    t = applyEvents(t, [out("c1", "two\n")]);
    expect(texts(t, "c1")).toEqual({ output: "one\ntwo\n", "hook:tool_pre": "pre\n" });
    expect(t.live.get("c1")?.map((s) => s.stream)).toEqual(["output", "hook:tool_pre"]);
    expect(t.rows).toBe(rows);
    expect(t.lastSeq).toBe(3); // live events carry no seq
  });

  it("keeps the text as text: markup is not interpreted", () => {
    const t = applyEvents(started(), [out("c1", "<img src=x onerror=alert(1)>")]);
    expect(texts(t, "c1").output).toBe("<img src=x onerror=alert(1)>");
  });

  it("is replaced by the result, while a background command's stream goes on", () => {
    let t = applyEvents(started(), [out("c1", "started\n", "bash:abc12345"), out("c1", "fg\n")]);
    t = applyEvents(t, [result(4, "c1", "Started in the background")]);
    expect(texts(t, "c1")).toEqual({ "bash:abc12345": "started\n" });
    t = applyEvents(t, [{ type: "turn-end", seq: 5, turn_id: "t1", reason: "completed" }]);
    t = applyEvents(t, [out("c1", "later\n", "bash:abc12345")]);
    expect(texts(t, "c1")).toEqual({ "bash:abc12345": "started\nlater\n" });
  });

  it("forgets a call's live output with its result when nothing runs on", () => {
    let t = applyEvents(started(), [out("c1", "x")]);
    t = applyEvents(t, [result(4, "c1")]);
    expect(t.live.has("c1")).toBe(false);
    t = applyEvents(t, [out("c2", "y")]);
    const before = t.live;
    t = applyEvents(t, [{ type: "turn-end", seq: 5, turn_id: "t1", reason: "interrupted" }]);
    expect(t.live.size).toBe(0);
    expect(before.size).toBe(1); // never mutated in place
  });

  it("stays bounded per stream, keeping the newest text", () => {
    let t = started();
    const chunk = "z".repeat(64 * 1024);
    for (let i = 0; i < 8; i++) t = applyEvents(t, [out("c1", chunk)]);
    t = applyEvents(t, [out("c1", "THE END")]);
    const text = texts(t, "c1").output ?? "";
    expect(text.length).toBe(MAX_LIVE_CHARS);
    expect(text.startsWith(LIVE_TRIMMED)).toBe(true);
    expect(text.endsWith("THE END")).toBe(true);
  });

  it("keeps a bounded number of calls, forgetting the least recently written", () => {
    let t = started();
    for (let i = 0; i <= MAX_LIVE_CALLS; i++) t = applyEvents(t, [out(`call${i}`, "x", "bash:p")]);
    expect(t.live.size).toBe(MAX_LIVE_CALLS);
    expect(t.live.has("call0")).toBe(false);
    expect(t.live.has(`call${MAX_LIVE_CALLS}`)).toBe(true);
  });

  it("starts over on a resubscription: the server sends the output so far again", () => {
    let t = applyEvents(started(), [out("c1", "before")]);
    t = resetInFlight(resetInFlight(t));
    t = applyEvents(t, [out("c1", "before"), out("c1", "after\n")]);
    expect(texts(t, "c1").output).toBe("beforeafter\n");
    expect(resetInFlight(emptyTranscript())).toEqual(emptyTranscript());
  });
});
