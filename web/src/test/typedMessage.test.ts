import { describe, expect, it } from "vitest";
import { applyEvents, emptyTranscript } from "../state/transcript";
import { turnStart } from "./events";

describe("a user message that used skills", () => {
  it("shows what the user typed, not the skill bodies the model received", () => {
    const t = applyEvents(emptyTranscript(), [
      turnStart(1),
      {
        type: "user-message",
        seq: 2,
        text: '<skill name="deploy">\nLong body.\n</skill>\n\nship it with $deploy',
        typed: "ship it with $deploy",
        slash: { kind: "skill-refs", names: ["deploy"] },
      },
    ]);
    const row = t.rows.find((r) => r.kind === "user");
    expect(row && "text" in row ? row.text : null).toBe("ship it with $deploy");
  });
});
