import { describe, expect, it } from "vitest";
import { parseToolList, parseVariables } from "../api/mcp";

describe("MCP settings forms", () => {
  it("reads NAME=value lines, a bare NAME keeping the saved value", () => {
    expect(parseVariables("A=1\n  B = two words \nKEEP\n\nEMPTY=\nURL=a=b")).toEqual({
      A: "1",
      B: " two words",
      KEEP: null,
      EMPTY: "",
      URL: "a=b",
    });
  });

  it("reads a tool allowlist, empty meaning every tool", () => {
    expect(parseToolList(" read_file, write_file  list ")).toEqual(["read_file", "write_file", "list"]);
    expect(parseToolList("  ")).toBeNull();
  });
});
