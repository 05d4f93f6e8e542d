// Document-level shortcuts. Modifier shortcuts work everywhere (also while typing); single keys
// (`a`/`i` to focus the input, Shift+G) only outside text fields. Escape interrupts a running
// turn unless focus is in a text field that has not opted in (data-escape-interrupts-stream).

import { useEffect } from "react";
import { engineSettingsApply } from "../lib/externalAgents";
import { actionFor, isEditableTarget, isMacPlatform, type ActionId } from "../lib/keybinds";
import {
  app,
  openDialog,
  openPalette,
  openPicker,
  selectedWorkspace,
  selectWorkspace,
  stepWorkspace,
} from "../state/app";
import { cycleAgent, cycleModel, interruptCurrent, stepThinkingLevel, toggleMode, toggleNotifyOnResponse } from "../state/commands";
import { inbox, nextWaiting } from "../state/inbox";
import { openScratchDraft } from "../state/scratch";
import { focusComposer } from "./chat/composerBus";
import { jumpToBottom } from "./chat/scrollBus";
import { toggleStrip } from "./chat/BackgroundStrip";

const mac = typeof navigator !== "undefined" && isMacPlatform(navigator.platform);

// What changes xum's own engine settings: nothing to do in an external agent's workspace.
const ENGINE_ACTIONS: ReadonlySet<ActionId> = new Set<ActionId>([
  "CYCLE_MODEL",
  "THINKING_UP",
  "THINKING_DOWN",
  "TOGGLE_MODE",
  "OPEN_AGENT_PICKER",
  "CYCLE_AGENT",
]);

function run(action: ActionId): void {
  if (ENGINE_ACTIONS.has(action) && !engineSettingsApply(selectedWorkspace(app.get()))) return;
  switch (action) {
    case "OPEN_PALETTE":
      if (app.get().paletteOpen) app.update({ paletteOpen: false });
      else openPalette("");
      return;
    case "NEW_WORKSPACE":
      openDialog({ kind: "new-workspace", projectPath: null });
      return;
    case "NEXT_WORKSPACE":
      stepWorkspace(1);
      return;
    case "PREV_WORKSPACE":
      stepWorkspace(-1);
      return;
    case "OPEN_SETTINGS":
      openDialog({ kind: "settings" });
      return;
    case "TOGGLE_SIDEBAR":
      app.update({ leftOpen: !app.get().leftOpen });
      return;
    case "TOGGLE_RIGHT_SIDEBAR":
      app.update({ rightOpen: !app.get().rightOpen });
      return;
    case "CYCLE_MODEL":
      void cycleModel();
      return;
    case "FOCUS_INPUT":
      focusComposer();
      return;
    case "THINKING_UP":
      void stepThinkingLevel(1);
      return;
    case "THINKING_DOWN":
      void stepThinkingLevel(-1);
      return;
    case "TOGGLE_MODE":
      void toggleMode();
      return;
    case "OPEN_AGENT_PICKER":
      if (selectedWorkspace(app.get())) openPicker(app.get().picker === "agent" ? null : "agent");
      return;
    case "CYCLE_AGENT":
      void cycleAgent();
      return;
    case "INTERRUPT":
      void interruptCurrent();
      return;
    case "JUMP_TO_BOTTOM":
      jumpToBottom();
      return;
    case "NEW_SCRATCH_CHAT":
      openScratchDraft();
      return;
    case "TOGGLE_NOTIFY":
      void toggleNotifyOnResponse();
      return;
    case "TOGGLE_BACKGROUND":
      toggleStrip();
      return;
    case "NEXT_INBOX_ITEM": {
      // The next workspace something waits in (oldest first), wherever the focus is.
      const next = nextWaiting(inbox.get().items, app.get().selectedId);
      if (next !== null) selectWorkspace(next);
      return;
    }
  }
}

export function useGlobalKeybinds(): void {
  useEffect(() => {
    const onKey = (e: KeyboardEvent) => {
      if (e.defaultPrevented || e.isComposing) return;
      const s = app.get();
      if (s.auth !== "signed-in") return;
      const action = actionFor(e, mac);
      const editable = isEditableTarget(e.target);
      const modal = s.paletteOpen || s.dialog.kind !== "none";
      if (action === null) {
        // `a` / `i` focus the chat input when nothing else has the keyboard.
        if (!editable && !modal && !e.ctrlKey && !e.metaKey && !e.altKey && (e.key === "a" || e.key === "i")) {
          e.preventDefault();
          focusComposer();
        }
        return;
      }
      if (modal && action !== "OPEN_PALETTE") return; // dialogs own the keyboard
      if (action === "INTERRUPT") {
        if (editable && !(e.target instanceof HTMLElement && e.target.dataset.escapeInterruptsStream !== undefined)) return;
      } else if (action === "JUMP_TO_BOTTOM" && editable) {
        return;
      }
      e.preventDefault();
      run(action);
    };
    window.addEventListener("keydown", onKey);
    return () => window.removeEventListener("keydown", onKey);
  }, []);
}
