import { describe, expect, it } from "vitest";
import type { ReplyStalledEvent } from "../api/types";
import { applyEvents, emptyTranscript, resetInFlight } from "../state/transcript";
import { assistant, turnStart, user } from "./events";

const stalled: ReplyStalledEvent = {
  type: "reply-stalled",
  silent_s: 30,
  idle_s: 120,
  began: true,
  message: "the model has sent nothing for 30 s (mid-reply)",
};

describe("a stalling reply", () => {
  it("shows the notice until the reply moves again", () => {
    let t = applyEvents(emptyTranscript(), [turnStart(1), user(2, "hi")]);
    t = applyEvents(t, [{ type: "step-start", step: 1, turn_id: "t1" }, stalled]);
    expect(t.stalled).toEqual(stalled);
    t = applyEvents(t, [{ type: "text-delta", text: "back" }]);
    expect(t.stalled).toBeNull();
  });

  it("is cleared by a retry, the committed reply and a resubscription", () => {
    let t = applyEvents(emptyTranscript(), [turnStart(1), user(2, "hi"), stalled]);
    t = applyEvents(t, [{ type: "retrying", attempt: 1, delay_s: 1, reason: "timeout" }]);
    expect(t.stalled).toBeNull();
    t = applyEvents(t, [stalled]);
    t = applyEvents(t, [assistant(3, "done")]);
    expect(t.stalled).toBeNull();
    t = applyEvents(t, [stalled]);
    expect(resetInFlight(t).stalled).toBeNull();
  });
});
