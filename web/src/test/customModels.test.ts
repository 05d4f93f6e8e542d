import { describe, expect, it } from "vitest";
import { chosenId, filterSuggestions, MODEL_ID_MAX, modelIdProblem, stepActive } from "../lib/customModels";

const catalog = [
  { id: "gpt-oss-120b", displayName: null },
  { id: "qwen3-coder-next", displayName: "Qwen3 Coder Next" },
  { id: "llama-4-scout", displayName: "Llama 4 Scout" },
  { id: "my-qwen", displayName: null },
];

describe("custom model ids", () => {
  it("accepts provider ids with slashes, colons and dots", () => {
    for (const id of ["qwen3-coder:30b", "anthropic/claude-x", "ft:gpt-team-2026", "gemini-3.8-flash"]) {
      expect(modelIdProblem(id)).toBeNull();
    }
  });

  it("refuses empty, spaced, control-character and overlong ids", () => {
    expect(modelIdProblem("")).toMatch(/Type a model ID/);
    expect(modelIdProblem("two words")).toMatch(/spaces/);
    expect(modelIdProblem("tab\there")).toMatch(/spaces/);
    expect(modelIdProblem("bell\u0007")).toMatch(/control/);
    expect(modelIdProblem("x".repeat(MODEL_ID_MAX))).toBeNull();
    expect(modelIdProblem("x".repeat(MODEL_ID_MAX + 1))).toMatch(/at most/);
  });
});

describe("suggestions", () => {
  it("lists ids that start with the query first, then other matches, names included", () => {
    expect(filterSuggestions(catalog, "qwen", []).map((m) => m.id)).toEqual(["qwen3-coder-next", "my-qwen"]);
    expect(filterSuggestions(catalog, "SCOUT", []).map((m) => m.id)).toEqual(["llama-4-scout"]);
    expect(filterSuggestions(catalog, "coder next", []).map((m) => m.id)).toEqual(["qwen3-coder-next"]);
    expect(filterSuggestions(catalog, "", []).length).toBe(4);
  });

  it("leaves out configured ids and stops at the limit", () => {
    expect(filterSuggestions(catalog, "", ["my-qwen", "gpt-oss-120b"]).map((m) => m.id)).toEqual([
      "qwen3-coder-next",
      "llama-4-scout",
    ]);
    expect(filterSuggestions(catalog, "", [], 2).length).toBe(2);
  });

  it("moves the highlight within the list, up to none", () => {
    expect(stepActive(-1, 1, 3)).toBe(0);
    expect(stepActive(2, 1, 3)).toBe(2);
    expect(stepActive(0, -1, 3)).toBe(-1);
    expect(stepActive(-1, -1, 3)).toBe(-1);
    expect(stepActive(1, 1, 0)).toBe(-1);
  });

  it("adds the highlighted suggestion, else what was typed", () => {
    const shown = filterSuggestions(catalog, "qwen", []);
    expect(chosenId(1, shown, "qwen")).toBe("my-qwen");
    expect(chosenId(-1, shown, "  qwen-custom ")).toBe("qwen-custom");
    expect(chosenId(5, shown, "typed")).toBe("typed");
  });
});
