import { describe, expect, it } from "vitest";
import { runsBare, slashEnter } from "../lib/slash";

const compact = { name: "compact", description: "", usage: "[-t <tokens>] [-m <model>]", kind: "command" };
const model = { name: "model", description: "", usage: "<alias|provider:model>", kind: "command" };
const goal = { name: "goal", description: "", usage: "[--budget <amount>] [--turns <n>] <objective>", kind: "command" };
const skill = { name: "deploy", description: "", usage: "", kind: "skill" };
const alias = { name: "sonnet", description: "", usage: "[+level] message", kind: "override" };
const thinking = { name: "+", description: "", usage: "<level> message", kind: "override" };

describe("Enter on a slash suggestion", () => {
  it("runs a command whose arguments are all optional at once", () => {
    expect(runsBare(compact)).toBe(true);
    expect(runsBare(skill)).toBe(true);
    expect(slashEnter("/comp", compact)).toEqual({ send: "/compact" });
    expect(slashEnter("/deploy", skill)).toEqual({ send: "/deploy" });
  });

  it("completes a command that needs an argument, unless it is typed out already", () => {
    expect(runsBare(model)).toBe(false);
    expect(runsBare(goal)).toBe(false);
    expect(slashEnter("/mo", model)).toEqual({ complete: "/model " });
    expect(slashEnter("/model", model)).toEqual({ send: "/model" });
    expect(slashEnter("/go", goal)).toEqual({ complete: "/goal " });
  });

  it("always completes the overrides, which need the message after them", () => {
    expect(runsBare(alias)).toBe(false);
    expect(slashEnter("/son", alias)).toEqual({ complete: "/sonnet " });
    expect(slashEnter("/+", thinking)).toEqual({ complete: "/+" });
  });
});
