import { describe, expect, it } from "vitest";
import type { EngineEvent } from "../api/types";
import { applyEvents, emptyTranscript, resetInFlight } from "../state/transcript";

const request = (id: string): EngineEvent => ({
  type: "approval-request",
  request_id: id,
  call_id: `call-${id}`,
  tool: "bash",
  kind: "command",
  subject: "<img src=x onerror=alert(1)> npm test",
  why: "not in the allowlist",
  prefix: "npm test",
});

describe("waiting approvals", () => {
  it("keeps one card per request until it is resolved", () => {
    let s = applyEvents(emptyTranscript(), [request("a"), request("b"), request("a")]);
    expect(s.approvals.map((a) => a.request_id)).toEqual(["a", "b"]);
    s = applyEvents(s, [{ type: "approval-resolved", request_id: "a", call_id: "call-a", decision: "once", by: "user" }]);
    expect(s.approvals.map((a) => a.request_id)).toEqual(["b"]);
  });

  it("forgets them when the turn ends and when resubscribing (the server sends them again)", () => {
    const waiting = applyEvents(emptyTranscript(), [request("a")]);
    const ended = applyEvents(waiting, [{ type: "turn-end", seq: 5, turn_id: "t", reason: "interrupted", error: null }]);
    expect(ended.approvals).toEqual([]);
    expect(resetInFlight(waiting).approvals).toEqual([]);
    const again = applyEvents(resetInFlight(waiting), [request("a")]);
    expect(again.approvals.map((a) => a.request_id)).toEqual(["a"]);
  });
});
