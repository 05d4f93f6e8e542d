// The provider's own web searches and the pages a reply cites: projected from the committed
// reply and shown as plain text and safe links (search results are written by strangers).

import { renderToStaticMarkup } from "react-dom/server";
import { describe, expect, it } from "vitest";
import type { EngineEvent } from "../api/types";
import { Citations, WebSearches } from "../components/chat/WebSearches";
import { applyEvents, emptyTranscript } from "../state/transcript";
import { assistant, turnStart, user } from "./events";

const searched: EngineEvent = {
  ...(assistant(3, "It is sunny.") as Extract<EngineEvent, { type: "assistant-message" }>),
  web_searches: [
    {
      query: "weather in Paris",
      results: [
        { title: "Paris <b>forecast</b>", url: "https://weather.example/paris" },
        { title: "sneaky", url: "javascript:alert(1)" },
      ],
    },
    { query: "second", results: [], error: "max_uses_exceeded" },
  ],
  citations: [{ title: "Paris forecast", url: "https://weather.example/paris" }],
};

describe("web searches in the transcript", () => {
  it("keeps the searches and citations on the assistant row", () => {
    const t = applyEvents(emptyTranscript(), [turnStart(1), user(2, "weather?"), searched]);
    const row = t.rows[1];
    if (row?.kind !== "assistant") throw new Error("expected an assistant row");
    expect(row.webSearches.map((s) => s.query)).toEqual(["weather in Paris", "second"]);
    expect(row.citations).toEqual([{ title: "Paris forecast", url: "https://weather.example/paris" }]);
  });

  it("a reply without searches has none", () => {
    const t = applyEvents(emptyTranscript(), [turnStart(1), assistant(2, "hi")]);
    const row = t.rows[0];
    if (row?.kind !== "assistant") throw new Error("expected an assistant row");
    expect(row.webSearches).toEqual([]);
    expect(row.citations).toEqual([]);
  });

  it("renders titles as text and only safe URLs as links", () => {
    if (searched.type !== "assistant-message") throw new Error("unreachable");
    const out = renderToStaticMarkup(<WebSearches searches={searched.web_searches ?? []} />);
    expect(out).toContain("searched: weather in Paris");
    expect(out).toContain("Paris &lt;b&gt;forecast&lt;/b&gt;"); // escaped, never markup
    expect(out).toContain('href="https://weather.example/paris"');
    expect(out).not.toContain('href="javascript'); // shown as inert text
    expect(out).toContain("failed: max_uses_exceeded");
    const cites = renderToStaticMarkup(<Citations citations={searched.citations ?? []} />);
    expect(cites).toContain("Sources:");
    expect(cites).toContain('rel="noopener noreferrer nofollow"');
    expect(renderToStaticMarkup(<WebSearches searches={[]} />)).toBe("");
  });
});
