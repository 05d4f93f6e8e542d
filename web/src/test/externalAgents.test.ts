import { describe, expect, it } from "vitest";
import {
  agentChoices,
  createFields,
  engineSettingsApply,
  externalLabel,
  type ExternalAgentInfo,
} from "../lib/externalAgents";

const agents: ExternalAgentInfo[] = [
  { name: "opencode", label: "opencode", models: [] },
  { name: "claude", label: "", models: ["sonnet"] },
];

describe("the new-workspace dialog's Agent choice", () => {
  it("offers xum first, then each configured agent by label", () => {
    expect(agentChoices(agents)).toEqual([
      { value: "", label: "xum" },
      { value: "opencode", label: "opencode" },
      { value: "claude", label: "claude" },
    ]);
  });

  it("is hidden when no external agent is configured", () => {
    expect(agentChoices([])).toEqual([]);
    expect(agentChoices(null)).toEqual([]);
  });

  it("sends the chosen agent, and nothing for xum's own", () => {
    expect(createFields("opencode")).toEqual({ externalAgent: "opencode" });
    expect(createFields("")).toEqual({});
  });
});

describe("an external agent's workspace", () => {
  it("shows the agent's label, or its name when the list does not have it", () => {
    expect(externalLabel({ externalAgent: "opencode" }, agents)).toBe("opencode");
    expect(externalLabel({ externalAgent: "claude" }, agents)).toBe("claude");
    expect(externalLabel({ externalAgent: "gone" }, agents)).toBe("gone");
    expect(externalLabel({ externalAgent: "gone" }, null)).toBe("gone");
    expect(externalLabel({ externalAgent: null }, agents)).toBeNull();
    expect(externalLabel({}, agents)).toBeNull();
  });

  it("has no model, thinking or agent settings of xum's", () => {
    expect(engineSettingsApply({ externalAgent: "opencode" })).toBe(false);
    expect(engineSettingsApply({ externalAgent: null })).toBe(true);
    expect(engineSettingsApply(null)).toBe(true);
  });
});
