import { describe, expect, it } from "vitest";
import { toChains, toRows } from "../lib/fallbacks";

describe("model fallback rows", () => {
  it("round-trips chains through the form's rows", () => {
    const chains = [{ model: "anthropic:claude-sonnet-5-5", models: ["anthropic:claude-sonnet-5", "haiku"] }];
    expect(toRows(chains)).toEqual([{ model: "anthropic:claude-sonnet-5-5", fallbacks: "anthropic:claude-sonnet-5, haiku" }]);
    expect(toChains(toRows(chains))).toEqual(chains);
  });

  it("leaves out blank rows and empty entries", () => {
    expect(toChains([{ model: "  ", fallbacks: "opus" }, { model: " sonnet ", fallbacks: " haiku, ,opus ," }])).toEqual([
      { model: "sonnet", models: ["haiku", "opus"] },
    ]);
  });
});
