import { describe, expect, it } from "vitest";
import type { EngineEvent, GitStatus } from "../api/types";
import { branches, noteBranch, shownBranch } from "../state/branches";
import { activity, activityOf, noteActivity } from "../state/activity";

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

describe("activity counted per workspace", () => {
  it("counts committed replies, turn ends and context rows only", () => {
    const events = [
      { type: "text-delta", text: "a" },
      { type: "assistant-message", seq: 3 },
      { type: "tool-result", seq: 4 },
      { type: "assistant-message", seq: 5 },
      { type: "turn-end", seq: 6 },
    ] as unknown as EngineEvent[];
    noteActivity("w1", events);
    noteActivity("w1", events.slice(0, 1));
    expect(activityOf(activity.get(), "w1")).toEqual({ replies: 2, turnEnds: 1, contextRows: 3 });
    expect(activityOf(activity.get(), "w2")).toEqual({ replies: 0, turnEnds: 0, contextRows: 0 });
  });
});
