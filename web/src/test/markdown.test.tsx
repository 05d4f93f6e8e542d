// The Markdown renderer's safety rules, checked on its real output (server-side rendered).

import { renderToStaticMarkup } from "react-dom/server";
import { describe, expect, it } from "vitest";
import { Markdown } from "../components/markdown/Markdown";

const html = (text: string) => renderToStaticMarkup(<Markdown text={text} />);

describe("markdown rendering", () => {
  it("renders javascript: and other non-web links inert", () => {
    const out = html("[click](javascript:alert(1)) [data](data:text/html,hi) [rel](/api/x) [ok](https://example.com)");
    expect(out).not.toMatch(/href="(javascript|data|\/api)/i);
    expect(out).toContain('href="https://example.com/"');
    expect(out).toContain('class="inert-link">click</span>');
  });

  it("never interprets raw HTML in the source", () => {
    const out = html('before <img src=x onerror="window.__xss=1"> <script>alert(1)</script> after');
    expect(out).not.toMatch(/<img/i);
    expect(out).not.toMatch(/<script/i);
    // Shown as the text it is, escaped.
    expect(out).toContain("&lt;img src=x onerror=");
  });

  it("does not load images from model output", () => {
    const out = html("![pixel](https://tracker.example.com/p.gif?secret=1)");
    expect(out).not.toMatch(/<img/i);
    expect(out).toContain("[image: pixel]");
  });

  it("supports GitHub extensions", () => {
    const out = html("| a | b |\n|---|---|\n| 1 | 2 |\n\n- [x] done\n\n~~gone~~ www.example.com");
    expect(out).toContain("<table>");
    expect(out).toContain('type="checkbox"');
    expect(out).toContain("<del>gone</del>");
    expect(out).toContain('href="http://www.example.com/"');
  });

  it("treats $$ as math and a single $ as text", () => {
    const out = html("costs $5 and $10, but $$x^2$$ is math");
    expect(out).toContain("costs $5 and $10");
    expect(out).toContain('class="math-inline"');
  });

  it("renders fenced code as a code block with its language", () => {
    const out = html("```python\nprint('<b>')\n```");
    expect(out).toContain("language-python");
    expect(out).toContain("print(&#x27;&lt;b&gt;&#x27;)");
  });
});
