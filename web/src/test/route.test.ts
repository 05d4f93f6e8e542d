import { describe, expect, it } from "vitest";
import { hashForWorkspace, workspaceFromHash } from "../lib/route";

describe("workspace routes", () => {
  it("reads the workspace id from the hash", () => {
    expect(workspaceFromHash("#/w/abc123")).toBe("abc123");
    expect(workspaceFromHash("#/w/abc123/")).toBe("abc123");
    expect(workspaceFromHash("#/w/a%20b")).toBe("a b");
  });

  it.each(["", "#", "#/", "#/w/", "#/x/abc", "#/w/a/b", "#/w/%E0%A4%A", "w/abc"])("names nothing for %j", (hash) => {
    expect(workspaceFromHash(hash)).toBeNull();
  });

  it("round-trips ids, odd characters included", () => {
    for (const id of ["abc", "a b", "a/b", "ü#?", "%41"]) {
      expect(workspaceFromHash(hashForWorkspace(id))).toBe(id);
    }
    expect(hashForWorkspace(null)).toBe("");
  });
});
