// Keybind definitions and matching: the single source of truth for shortcuts in the UI.
//
// `ctrl` means the primary modifier: Ctrl on Linux/Windows, Cmd on macOS (the docs' convention).
// Some documented shortcuts are taken by the browser before the page sees them (Chromium and
// Firefox never deliver Ctrl+N / Ctrl+T to a page), so actions whose documented binding is
// reserved also carry an alternative that works in a browser tab.

export interface Keybind {
  key: string;
  ctrl?: boolean;
  shift?: boolean;
  alt?: boolean;
  /** Match on the physical key (KeyboardEvent.code) instead of the produced character. */
  code?: string;
}

export interface KeyLike {
  key: string;
  code?: string;
  ctrlKey: boolean;
  metaKey: boolean;
  shiftKey: boolean;
  altKey: boolean;
}

export type ActionId =
  | "OPEN_PALETTE"
  | "NEW_WORKSPACE"
  | "NEXT_WORKSPACE"
  | "PREV_WORKSPACE"
  | "OPEN_SETTINGS"
  | "TOGGLE_SIDEBAR"
  | "CYCLE_MODEL"
  | "FOCUS_INPUT"
  | "THINKING_UP"
  | "THINKING_DOWN"
  | "TOGGLE_MODE"
  | "OPEN_AGENT_PICKER"
  | "CYCLE_AGENT"
  | "INTERRUPT"
  | "JUMP_TO_BOTTOM"
  | "TOGGLE_RIGHT_SIDEBAR"
  | "TOGGLE_BACKGROUND"
  | "NEXT_INBOX_ITEM"
  | "TOGGLE_NOTIFY"
  | "NEW_SCRATCH_CHAT";

export interface ActionBinding {
  /** Bindings as documented; the first is shown unless it is browser-reserved. */
  binds: readonly Keybind[];
  /** Bindings a browser tab never receives (kept for installed apps; never shown alone). */
  reserved?: readonly Keybind[];
}

export const KEYBINDS: Record<ActionId, ActionBinding> = {
  OPEN_PALETTE: { binds: [{ key: "p", ctrl: true, shift: true, code: "KeyP" }] },
  NEW_WORKSPACE: {
    binds: [{ key: "n", alt: true, code: "KeyN" }],
    reserved: [{ key: "n", ctrl: true, code: "KeyN" }],
  },
  NEXT_WORKSPACE: { binds: [{ key: "j", ctrl: true, code: "KeyJ" }] },
  PREV_WORKSPACE: { binds: [{ key: "k", ctrl: true, code: "KeyK" }] },
  OPEN_SETTINGS: { binds: [{ key: ",", ctrl: true, code: "Comma" }] },
  TOGGLE_SIDEBAR: { binds: [{ key: "p", ctrl: true, code: "KeyP" }] },
  CYCLE_MODEL: { binds: [{ key: "/", ctrl: true, code: "Slash" }] },
  FOCUS_INPUT: { binds: [{ key: "i", ctrl: true, code: "KeyI" }] },
  THINKING_UP: { binds: [{ key: "]", ctrl: true, shift: true, code: "BracketRight" }] },
  THINKING_DOWN: { binds: [{ key: "[", ctrl: true, shift: true, code: "BracketLeft" }] },
  TOGGLE_MODE: { binds: [{ key: "m", ctrl: true, shift: true, code: "KeyM" }] },
  OPEN_AGENT_PICKER: { binds: [{ key: "a", ctrl: true, shift: true, code: "KeyA" }] },
  CYCLE_AGENT: { binds: [{ key: ".", ctrl: true, code: "Period" }] },
  INTERRUPT: { binds: [{ key: "Escape" }] },
  JUMP_TO_BOTTOM: { binds: [{ key: "G", shift: true, code: "KeyG" }] },
  TOGGLE_RIGHT_SIDEBAR: { binds: [{ key: "b", ctrl: true, shift: true, code: "KeyB" }] },
  // The background processes strip. Chromium and Firefox keep Ctrl+Shift+J for their consoles.
  TOGGLE_BACKGROUND: {
    binds: [{ key: "j", alt: true, code: "KeyJ" }],
    reserved: [{ key: "j", ctrl: true, shift: true, code: "KeyJ" }],
  },
  NEXT_INBOX_ITEM: { binds: [{ key: "i", alt: true, code: "KeyI" }] },
  // "Notify on all responses" for the workspace on screen (docs/notifications.md).
  TOGGLE_NOTIFY: { binds: [{ key: ",", ctrl: true, shift: true, code: "Comma" }] },
  // Browsers keep Ctrl+Shift+N (a private window): Alt+Shift+N works in a tab.
  NEW_SCRATCH_CHAT: {
    binds: [{ key: "n", alt: true, shift: true, code: "KeyN" }],
    reserved: [{ key: "n", ctrl: true, shift: true, code: "KeyN" }],
  },
};

export function isMacPlatform(platform: string): boolean {
  return /mac|iphone|ipad|ipod/i.test(platform);
}

/** Whether the event is exactly this keybind (no extra modifiers). */
export function matchesKeybind(event: KeyLike, bind: Keybind, mac: boolean): boolean {
  const primary = mac ? event.metaKey : event.ctrlKey;
  const other = mac ? event.ctrlKey : event.metaKey;
  if (Boolean(bind.ctrl) !== primary || other) return false;
  if (Boolean(bind.alt) !== event.altKey) return false;
  if (Boolean(bind.shift) !== event.shiftKey) return false;
  // With Shift or Alt held the produced character changes ("{" for "[", "N" or "˜" for "n"), and
  // keyboard layouts move punctuation, so a bind with a physical code matches either.
  if (bind.code !== undefined && event.code === bind.code) return true;
  return event.key.toLowerCase() === bind.key.toLowerCase();
}

/** The action the event triggers, if any. */
export function actionFor(event: KeyLike, mac: boolean): ActionId | null {
  for (const [id, binding] of Object.entries(KEYBINDS) as [ActionId, ActionBinding][]) {
    const all = [...binding.binds, ...(binding.reserved ?? [])];
    if (all.some((b) => matchesKeybind(event, b, mac))) return id;
  }
  return null;
}

const KEY_NAMES: Record<string, string> = {
  Escape: "Esc",
  ArrowUp: "Up",
  ArrowDown: "Down",
  Enter: "Enter",
};

export function formatKeybind(bind: Keybind, mac: boolean): string {
  const parts: string[] = [];
  if (bind.ctrl) parts.push(mac ? "Cmd" : "Ctrl");
  if (bind.alt) parts.push(mac ? "Option" : "Alt");
  if (bind.shift) parts.push("Shift");
  const name = KEY_NAMES[bind.key] ?? (bind.key.length === 1 ? bind.key.toUpperCase() : bind.key);
  parts.push(name);
  return parts.join("+");
}

/** The label shown in menus and the palette: the binding a browser tab actually receives. */
export function shortcutLabel(id: ActionId, mac: boolean): string {
  const first = KEYBINDS[id].binds[0];
  return first ? formatKeybind(first, mac) : "";
}

/** Whether focus is in a text field, where single-key shortcuts must not fire. */
export function isEditableTarget(target: EventTarget | null): boolean {
  if (typeof HTMLElement === "undefined" || !(target instanceof HTMLElement)) return false;
  if (target.isContentEditable) return true;
  const tag = target.tagName;
  return tag === "INPUT" || tag === "TEXTAREA" || tag === "SELECT";
}
