import { describe, expect, it } from "vitest";
import type { ModelsInfo } from "../api/types";
import { modelLabel, nextModel, stepThinking } from "../lib/models";
import { matchSlash, parseSlash, slashQuery } from "../lib/slash";
import { fuzzyScore } from "../lib/fuzzy";
import { classifyDiffLine } from "../lib/diff";

const info: ModelsInfo = {
  defaultModel: "anthropic:opus",
  aliases: { opus: "anthropic:opus", sonnet: "anthropic:sonnet" },
  models: [
    { model: "anthropic:opus", provider: "anthropic", id: "opus", displayName: "Opus", contextWindow: 200000, priced: true, usable: true },
    { model: "openai:gpt", provider: "openai", id: "gpt", displayName: "GPT", contextWindow: null, priced: true, usable: false },
    { model: "anthropic:sonnet", provider: "anthropic", id: "sonnet", displayName: "Sonnet", contextWindow: 200000, priced: true, usable: true },
  ],
};

describe("models", () => {
  it("cycles through usable models only, from the default when none is set", () => {
    expect(nextModel(info, "opus")).toBe("anthropic:sonnet");
    expect(nextModel(info, "anthropic:sonnet")).toBe("anthropic:opus");
    expect(nextModel(info, null)).toBe("anthropic:sonnet");
    expect(nextModel({ ...info, models: [] }, "opus")).toBeNull();
  });

  it("clamps thinking steps to the model's range", () => {
    const levels = ["low", "medium", "high"];
    expect(stepThinking(levels, "medium", 1)).toBe("high");
    expect(stepThinking(levels, "high", 1)).toBe("high");
    expect(stepThinking(levels, "low", -1)).toBe("low");
    expect(stepThinking(levels, "med", -1)).toBe("low");
    expect(stepThinking(levels, null, 1)).toBe("high");
  });

  it("names the provider when two providers serve a model of the same name", () => {
    const twins: ModelsInfo = {
      defaultModel: "a:model",
      aliases: {},
      models: [
        { model: "a:model", provider: "a", id: "model", displayName: "model", contextWindow: null, priced: false, usable: true },
        { model: "b:model", provider: "b", id: "model", displayName: "Model", contextWindow: null, priced: false, usable: true },
        { model: "b:other", provider: "b", id: "other", displayName: "other", contextWindow: null, priced: false, usable: true },
      ],
    };
    expect(modelLabel(twins, "a:model")).toBe("model · a");
    expect(modelLabel(twins, "b:model")).toBe("Model · b");
    expect(modelLabel(twins, "b:other")).toBe("other");
    expect(modelLabel(twins, nextModel(twins, "a:model"))).not.toBe(modelLabel(twins, "a:model"));
  });

  it("labels aliases and unknown models", () => {
    expect(modelLabel(info, "sonnet")).toBe("Sonnet");
    expect(modelLabel(info, "local:qwen")).toBe("local:qwen");
    expect(modelLabel(info, null)).toBe("Opus");
  });
});

describe("slash input", () => {
  it("suggests only while the command name is typed", () => {
    expect(slashQuery("/mo")).toBe("mo");
    expect(slashQuery("/")).toBe("");
    expect(slashQuery("/model x")).toBeNull();
    expect(slashQuery("hi /x")).toBeNull();
  });

  it("parses a command, its arguments and the lines after it", () => {
    expect(parseSlash("/fork try-b\n\nstart here")).toEqual({ name: "fork", args: "try-b", rest: "start here" });
    expect(parseSlash("/sonnet+high explain")).toEqual({ name: "sonnet+high", args: "explain", rest: "" });
    expect(parseSlash("no command")).toBeNull();
  });

  it("ranks prefix matches before substring matches", () => {
    const cmds = [
      { name: "review", description: "" },
      { name: "deploy", description: "" },
      { name: "preview", description: "" },
    ];
    expect(matchSlash(cmds, "rev").map((c) => c.name)).toEqual(["review", "preview"]);
  });
});

describe("palette matching and diff classes", () => {
  it("matches subsequences and prefers contiguous ones", () => {
    expect(fuzzyScore("fix-login-bug", "xyz")).toBeNull();
    expect(fuzzyScore("fix-login-bug", "flb")).not.toBeNull();
    expect(fuzzyScore("fix-login-bug", "login")!).toBeGreaterThan(fuzzyScore("fix-login-bug", "flb")!);
  });

  it("classifies unified diff lines", () => {
    expect(classifyDiffLine("+++ b/x")).toBe("file");
    expect(classifyDiffLine("+added")).toBe("add");
    expect(classifyDiffLine("-removed")).toBe("del");
    expect(classifyDiffLine("@@ -1 +1 @@")).toBe("hunk");
    expect(classifyDiffLine(" same")).toBe("context");
  });
});
