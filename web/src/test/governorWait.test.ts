import { describe, expect, it } from "vitest";
import type { GovernorWaitEvent } from "../api/types";
import { applyEvents, emptyTranscript, resetInFlight } from "../state/transcript";
import { turnStart, user } from "./events";

const wait: GovernorWaitEvent = {
  type: "governor-wait",
  reason: "backoff",
  message: "anthropic asked to slow down (rate limit or overload): every session waits 2 s",
  since: 1_700_000_000,
  provider: "anthropic",
  retry_at: 1_700_000_002,
};

describe("a governor wait", () => {
  it("shows why the workspace waits until the wait ends", () => {
    let t = applyEvents(emptyTranscript(), [turnStart(1), user(2, "hi"), wait]);
    expect(t.governor).toEqual(wait);
    t = applyEvents(t, [{ type: "governor-wait-end", reason: "backoff", waited_s: 2 }]);
    expect(t.governor).toBeNull();
  });

  it("is cleared by the turn's end and by a resubscription", () => {
    let t = applyEvents(emptyTranscript(), [turnStart(1), user(2, "hi"), wait]);
    expect(resetInFlight(t).governor).toBeNull();
    t = applyEvents(t, [{ type: "turn-end", seq: 3, ts: 3, turn_id: "t1", reason: "interrupted" }]);
    expect(t.governor).toBeNull();
  });
});
