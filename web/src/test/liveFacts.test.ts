import { describe, expect, it } from "vitest";
import type { EngineEvent, GitStatus } from "../api/types";
import { branches, noteBranch, shownBranch } from "../state/branches";
import { noteReplies, replies } from "../state/replies";

const status = (branch: string | null, isGit = true): GitStatus => ({
  isGit,
  branch,
  base: null,
  ahead: 0,
  behind: 0,
  entries: [],
  truncated: false,
});

describe("the branch a workspace is on", () => {
  it("shows the record's branch until git has been asked, then git's", () => {
    expect(shownBranch(branches.get(), "w1", "made-by-xum")).toBe("made-by-xum");
    noteBranch("w1", status("switched-by-agent"));
    expect(shownBranch(branches.get(), "w1", "made-by-xum")).toBe("switched-by-agent");
    noteBranch("w1", status(null));
    expect(shownBranch(branches.get(), "w1", "made-by-xum")).toBe("detached HEAD");
    noteBranch("w2", status(null, false));
    expect(shownBranch(branches.get(), "w2", "x")).toBeNull(); // not a git checkout
  });
});

describe("replies counted per workspace", () => {
  it("counts committed replies only", () => {
    const events = [
      { type: "text-delta", text: "a" },
      { type: "assistant-message", seq: 3 },
      { type: "tool-result", seq: 4 },
      { type: "assistant-message", seq: 5 },
    ] as unknown as EngineEvent[];
    noteReplies("w1", events);
    noteReplies("w1", events.slice(0, 1));
    expect(replies.get().w1).toBe(2);
    expect(replies.get().w2).toBeUndefined();
  });
});
