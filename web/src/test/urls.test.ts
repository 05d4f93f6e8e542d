import { describe, expect, it } from "vitest";
import { markdownUrlTransform, safeHref } from "../lib/urls";

describe("safeHref", () => {
  it("keeps absolute http(s) and mailto links", () => {
    expect(safeHref("https://example.com/a?b=1")).toBe("https://example.com/a?b=1");
    expect(safeHref("http://example.com")).toBe("http://example.com/");
    expect(safeHref("mailto:dev@example.com")).toBe("mailto:dev@example.com");
  });

  it.each([
    "javascript:alert(1)",
    "JavaScript:alert(1)",
    " javascript:alert(1)",
    "java\tscript:alert(1)",
    "java\nscript:alert(1)",
    "\u0000javascript:alert(1)",
    "data:text/html,<script>alert(1)</script>",
    "vbscript:msgbox(1)",
    "file:///etc/passwd",
    "/api/workspaces",
    "../relative",
    "//evil.example.com/x",
    "#anchor",
    "",
    "http://",
  ])("renders %j inert", (raw) => {
    expect(safeHref(raw)).toBeNull();
    expect(markdownUrlTransform(raw)).toBe("");
  });
});
