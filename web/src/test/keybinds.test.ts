import { describe, expect, it } from "vitest";
import { actionFor, formatKeybind, KEYBINDS, matchesKeybind, shortcutLabel, type KeyLike } from "../lib/keybinds";

function key(k: string, mods: Partial<KeyLike> = {}): KeyLike {
  return { key: k, code: mods.code, ctrlKey: false, metaKey: false, shiftKey: false, altKey: false, ...mods };
}

describe("keybind matching", () => {
  it("uses Ctrl off macOS and Cmd on macOS as the primary modifier", () => {
    const bind = { key: "j", ctrl: true };
    expect(matchesKeybind(key("j", { ctrlKey: true }), bind, false)).toBe(true);
    expect(matchesKeybind(key("j", { metaKey: true }), bind, false)).toBe(false);
    expect(matchesKeybind(key("j", { metaKey: true }), bind, true)).toBe(true);
    expect(matchesKeybind(key("j", { ctrlKey: true }), bind, true)).toBe(false);
  });

  it("requires the exact modifiers", () => {
    expect(actionFor(key("p", { ctrlKey: true, code: "KeyP" }), false)).toBe("TOGGLE_SIDEBAR");
    expect(actionFor(key("P", { ctrlKey: true, shiftKey: true, code: "KeyP" }), false)).toBe("OPEN_PALETTE");
    expect(actionFor(key("p", { ctrlKey: true, altKey: true, code: "KeyP" }), false)).toBeNull();
    expect(actionFor(key("p", { code: "KeyP" }), false)).toBeNull();
  });

  it("matches shifted punctuation by its physical key", () => {
    // Ctrl+Shift+] produces "}" on a US layout.
    expect(actionFor(key("}", { ctrlKey: true, shiftKey: true, code: "BracketRight" }), false)).toBe("THINKING_UP");
    expect(actionFor(key("{", { ctrlKey: true, shiftKey: true, code: "BracketLeft" }), false)).toBe("THINKING_DOWN");
    expect(actionFor(key("/", { ctrlKey: true, code: "Slash" }), false)).toBe("CYCLE_MODEL");
    expect(actionFor(key(".", { ctrlKey: true, code: "Period" }), false)).toBe("CYCLE_AGENT");
    expect(actionFor(key("A", { ctrlKey: true, shiftKey: true, code: "KeyA" }), false)).toBe("OPEN_AGENT_PICKER");
    // Alt+N produces a dead key or another character on some layouts.
    expect(actionFor(key("˜", { altKey: true, code: "KeyN" }), true)).toBe("NEW_WORKSPACE");
  });

  it("keeps browser-reserved bindings working where delivered, but labels the alternative", () => {
    expect(actionFor(key("n", { ctrlKey: true, code: "KeyN" }), false)).toBe("NEW_WORKSPACE");
    expect(shortcutLabel("NEW_WORKSPACE", false)).toBe("Alt+N");
    expect(shortcutLabel("NEW_WORKSPACE", true)).toBe("Option+N");
  });

  it("gives every action a distinct binding", () => {
    const seen = new Map<string, string>();
    for (const [id, binding] of Object.entries(KEYBINDS)) {
      for (const b of [...binding.binds, ...(binding.reserved ?? [])]) {
        const sig = `${b.ctrl}-${b.shift}-${b.alt}-${b.code ?? b.key}`;
        expect(seen.get(sig), `${id} collides with ${seen.get(sig)}`).toBeUndefined();
        seen.set(sig, id);
      }
    }
  });

  it("formats bindings for display", () => {
    expect(formatKeybind({ key: "p", ctrl: true, shift: true }, false)).toBe("Ctrl+Shift+P");
    expect(formatKeybind({ key: "p", ctrl: true, shift: true }, true)).toBe("Cmd+Shift+P");
    expect(formatKeybind({ key: "Escape" }, false)).toBe("Esc");
  });
});
