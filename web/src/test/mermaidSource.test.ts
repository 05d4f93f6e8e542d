import { describe, expect, it } from "vitest";
import { mermaidSafeSource } from "../components/markdown/mermaidSource";

describe("mermaidSafeSource", () => {
  it("turns tag openers in labels into Mermaid's entity", () => {
    expect(mermaidSafeSource('A["<img src=x onerror=alert(1)>"] --> B')).toBe('A["#lt;img src=x onerror=alert(1)>"] --> B');
    expect(mermaidSafeSource("A[<b>bold</b>]")).toBe("A[#lt;b>bold#lt;/b>]");
    expect(mermaidSafeSource("A[<!-- x -->]")).toBe("A[#lt;!-- x -->]");
    expect(mermaidSafeSource("A[<svg/onload=1>]")).toBe("A[#lt;svg/onload=1>]");
  });

  it("leaves line breaks, arrows and comparisons alone", () => {
    for (const src of [
      "A[one<br>two] --> B[three<br/>four<BR />five]",
      "A <--> B",
      "A <-.-> B",
      "A <==> B",
      "classA <|-- classB",
      "class Shape {\n  <<interface>>\n}",
      "Alice ->> Bob: hi\nBob -->> Alice: ok",
      "A[x < y] --> B[y > x]",
      "graph TD\n  A[Start] --> B{Check}",
    ]) {
      expect(mermaidSafeSource(src)).toBe(src);
    }
  });

  it("leaves no tag opener behind", () => {
    const hostile = "<img src=x onerror=a><IMG SRC=x ONERROR=b></p><svg onload=c><<<script><<img onerror=d>><br onerror=e>";
    expect(/<[A-Za-z!?/]/.test(mermaidSafeSource(hostile).replace(/<br\s*\/?>/gi, ""))).toBe(false);
  });
});

describe("mermaidSafeSource interaction statements", () => {
  it("drops click, callback and link statements and keeps the rest", () => {
    const src = [
      "graph TD",
      "  A[Start] --> B[Next]",
      '  click A "javascript:alert(1)"',
      '  click B href "https://example.com" "tip"',
      "  CLICK A call doIt()",
      '\tcallback B "fn"',
      '  link A "https://example.com"',
      "  links Alice: {\"Dash\": \"https://x\"}",
      "  click --> C",
    ].join("\n");
    const out = mermaidSafeSource(src);
    expect(out.split("\n").filter((l) => l.trim() !== "")).toEqual([
      "graph TD",
      "  A[Start] --> B[Next]",
      "  click --> C",
    ]);
  });
});
