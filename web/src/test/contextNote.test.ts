import { describe, expect, it } from "vitest";
import { applyEvents, emptyTranscript, lastUserText } from "../state/transcript";
import { assistant, turnEnd, turnStart, user } from "./events";

const UPDATE = "<context-update>\nxum: part of this workspace's context changed...\n</context-update>";

describe("context update rows", () => {
  it("become a context note, not a user message, and are never the turn's prompt", () => {
    const t = applyEvents(emptyTranscript(), [
      turnStart(1),
      { type: "user-message", seq: 2, text: UPDATE, synthetic: true, kind: "context_update", changed: ["instructions"] },
      user(3, "the real question"),
      assistant(4, "an answer"),
      turnEnd(5, "error"),
    ]);
    expect(t.rows.map((r) => r.kind)).toEqual(["context-note", "user", "assistant", "turn-end"]);
    const note = t.rows[0];
    expect(note?.kind === "context-note" && note.changed).toEqual(["instructions"]);
    expect(note?.kind === "context-note" && note.text).toBe(UPDATE);
    expect(lastUserText(t)).toBe("the real question");
    const end = t.rows[3];
    expect(end?.kind === "turn-end" && end.prompt).toBe("the real question");
  });

  it("keep goal continuations as goal notices", () => {
    const t = applyEvents(emptyTranscript(), [
      turnStart(1),
      { type: "user-message", seq: 2, text: "<goal-continuation>", synthetic: true, kind: "goal_continuation" },
    ]);
    expect(t.rows.map((r) => r.kind)).toEqual(["notice"]);
  });
});
