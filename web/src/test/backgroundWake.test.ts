import { describe, expect, it } from "vitest";
import { applyEvents, emptyTranscript } from "../state/transcript";
import { assistant, turnEnd, turnStart } from "./events";

const NOTICE = "Background process bash:k7m2x9qa (Tests) has ended: exited, exit code 1.\nRead its output with bash_output.";

describe("background wake-up rows", () => {
  it("show the notice's first line, not a user bubble, and leave the turn without a prompt", () => {
    const t = applyEvents(emptyTranscript(), [
      turnStart(1),
      { type: "user-message", seq: 2, text: NOTICE, synthetic: true, kind: "background_wake" },
      assistant(3, "The tests failed."),
      turnEnd(4, "error"),
    ]);
    expect(t.rows.map((r) => r.kind)).toEqual(["notice", "assistant", "turn-end"]);
    const note = t.rows[0];
    expect(note?.kind === "notice" && note.tone).toBe("background");
    expect(note?.kind === "notice" && note.text).toBe(
      "Background process bash:k7m2x9qa (Tests) has ended: exited, exit code 1.",
    );
    const end = t.rows[2];
    expect(end?.kind === "turn-end" && end.prompt).toBeNull();
  });
});
