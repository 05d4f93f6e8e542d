import { describe, expect, it } from "vitest";
import { safeColor } from "../components/chat/Pickers";
import { matchSlash, parseSlash, slashInsertion, slashQuery } from "../lib/slash";

describe("slash input", () => {
  it("reads the command being typed only while it is the whole input", () => {
    expect(slashQuery("/mo")).toBe("mo");
    expect(slashQuery("/")).toBe("");
    expect(slashQuery("/model sonnet")).toBeNull();
    expect(slashQuery("hello /mo")).toBeNull();
  });

  it("splits a command into its first line and the lines below", () => {
    expect(parseSlash("/fork try-redis\n\nuse redis\nnow")).toEqual({ name: "fork", args: "try-redis", rest: "use redis\nnow" });
    expect(parseSlash("/model")).toEqual({ name: "model", args: "", rest: "" });
    expect(parseSlash("no command")).toBeNull();
  });

  it("inserts a space after a command but not after the thinking-only override", () => {
    expect(slashInsertion({ name: "model", description: "" })).toBe("/model ");
    expect(slashInsertion({ name: "+", description: "" })).toBe("/+");
  });

  it("ranks prefix matches before inner matches", () => {
    const list = ["deploy", "model", "sonnet", "fork"].map((name) => ({ name, description: "" }));
    expect(matchSlash(list, "o").map((c) => c.name)).toEqual(["deploy", "model", "sonnet", "fork"]);
    expect(matchSlash(list, "s").map((c) => c.name)).toEqual(["sonnet"]);
    expect(matchSlash(list, "fo").map((c) => c.name)).toEqual(["fork"]);
  });
});

describe("agent colours from repository files", () => {
  it("accepts plain colours and refuses anything CSS could do more with", () => {
    expect(safeColor("#aa3366")).toBe("#aa3366");
    expect(safeColor("teal")).toBe("teal");
    expect(safeColor("url(https://evil.example/x)")).toBeUndefined();
    expect(safeColor("red; background: url(x)")).toBeUndefined();
    expect(safeColor(null)).toBeUndefined();
  });
});
