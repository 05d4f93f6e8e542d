import { describe, expect, it } from "vitest";
import { insertMention, mentionAt, resourceMatches } from "../lib/mentions";

describe("@ mentions", () => {
  it("finds the @word the caret is in, at the start or after whitespace", () => {
    expect(mentionAt("@sr", 3)).toEqual({ start: 0, query: "sr" });
    expect(mentionAt("look at @src/ma", 15)).toEqual({ start: 8, query: "src/ma" });
    expect(mentionAt("look at @", 9)).toEqual({ start: 8, query: "" });
    expect(mentionAt("mail me@example.com", 19)).toBeNull();
    expect(mentionAt("@done and more", 14)).toBeNull();
    expect(mentionAt("two\n@li", 7)).toEqual({ start: 4, query: "li" });
  });

  it("replaces the whole word with the path and a space", () => {
    const text = "see @sr please";
    const m = mentionAt(text, 7);
    expect(m).not.toBeNull();
    if (!m) return;
    expect(insertMention(text, m, "src/main.py")).toEqual({ text: "see @src/main.py please", caret: 17 });
    const end = "fix @ap";
    const m2 = mentionAt(end, end.length);
    if (!m2) throw new Error("no mention");
    expect(insertMention(end, m2, "app.py")).toEqual({ text: "fix @app.py ", caret: 12 });
  });
});

describe("MCP resource mentions", () => {
  it("matches server:uri mentions case-insensitively, bounded", () => {
    const all = ["docs:notes://readme", "docs:notes://big", "db:table://users"];
    expect(resourceMatches(all, "READ")).toEqual(["docs:notes://readme"]);
    expect(resourceMatches(all, "docs:")).toEqual(["docs:notes://readme", "docs:notes://big"]);
    expect(resourceMatches(all, "", 2)).toEqual(["docs:notes://readme", "docs:notes://big"]);
  });

  it("inserts a resource mention like a path", () => {
    const text = "see @do";
    const m = mentionAt(text, text.length);
    if (!m) throw new Error("no mention");
    expect(insertMention(text, m, "docs:notes://readme")).toEqual({ text: "see @docs:notes://readme ", caret: 25 });
  });
});
