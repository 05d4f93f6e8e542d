import { describe, expect, it } from "vitest";
import { configChoices, devcontainerRuntime, type DevcontainerConfig } from "../lib/devcontainers";

const configs: DevcontainerConfig[] = [
  { name: null, path: ".devcontainer/devcontainer.json" },
  { name: "web", path: ".devcontainer/web/devcontainer.json" },
];

describe("the Dev Container choice", () => {
  it("lists the unnamed config first and names the others by folder", () => {
    expect(configChoices(configs)).toEqual([
      { value: "", label: ".devcontainer/devcontainer.json" },
      { value: "web", label: "web (.devcontainer/web/devcontainer.json)" },
    ]);
    expect(configChoices([])).toEqual([]);
  });

  it("sends a named config by name and the unnamed one as the default", () => {
    expect(devcontainerRuntime(configs, "web")).toEqual({ type: "devcontainer", config: "web" });
    expect(devcontainerRuntime(configs, "")).toEqual({ type: "devcontainer" });
    // The only config is a named one: it is sent by name even before a choice is made.
    expect(devcontainerRuntime(configs.slice(1), "")).toEqual({ type: "devcontainer", config: "web" });
  });

  it("asks for shared credentials only when the box is checked", () => {
    expect(devcontainerRuntime(configs, "", true)).toEqual({ type: "devcontainer", shareCredentials: true });
    expect(devcontainerRuntime(configs, "web", true)).toEqual({ type: "devcontainer", config: "web", shareCredentials: true });
    expect(devcontainerRuntime(configs, "web", false)).toEqual({ type: "devcontainer", config: "web" });
  });
});
