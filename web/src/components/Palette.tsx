// The command palette. No prefix: switch workspace. `>`: every other command. `/`: slash
// commands, inserted into the composer.

import { useEffect, useRef, useState } from "react";
import { isMacPlatform, shortcutLabel, type ActionId } from "../lib/keybinds";
import { fuzzyScore } from "../lib/fuzzy";
import { entryLabel, modelLabel } from "../lib/models";
import { slashInsertion } from "../lib/slash";
import { useStore } from "../lib/store";
import { app, openDialog, openPicker, selectedWorkspace, selectWorkspace, signOut, stepWorkspace, toast } from "../state/app";
import { archiveWorkspace } from "../state/actions";
import { openScratchDraft } from "../state/scratch";
import { cycleAgent, cycleModel, interruptCurrent, setModel, stepThinkingLevel, toggleMode, toggleNotifyOnResponse } from "../state/commands";
import { errorMessage } from "../api/http";
import { focusComposer, insertComposerText } from "./chat/composerBus";
import { jumpToBottom } from "./chat/scrollBus";
import { StatusDot } from "./StatusDot";

const mac = typeof navigator !== "undefined" && isMacPlatform(navigator.platform);

interface Entry {
  id: string;
  section: string;
  label: string;
  detail?: string;
  shortcut?: string;
  run: () => void;
  statusFor?: string;
}

function close(): void {
  app.update({ paletteOpen: false });
}

function commandEntries(): Entry[] {
  const s = app.get();
  const ws = selectedWorkspace(s);
  const key = (id: ActionId) => shortcutLabel(id, mac);
  const out: Entry[] = [
    { id: "new", section: "Workspaces", label: "New workspace", shortcut: key("NEW_WORKSPACE"), run: () => openDialog({ kind: "new-workspace", projectPath: null }) },
    { id: "add-project", section: "Projects", label: "Add project", run: () => openDialog({ kind: "add-project" }) },
    { id: "new-scratch", section: "Workspaces", label: "New scratch chat", shortcut: key("NEW_SCRATCH_CHAT"), run: openScratchDraft },
    { id: "next", section: "Navigation", label: "Next workspace", shortcut: key("NEXT_WORKSPACE"), run: () => stepWorkspace(1) },
    { id: "prev", section: "Navigation", label: "Previous workspace", shortcut: key("PREV_WORKSPACE"), run: () => stepWorkspace(-1) },
    { id: "sidebar", section: "Navigation", label: "Toggle sidebar", shortcut: key("TOGGLE_SIDEBAR"), run: () => app.update({ leftOpen: !app.get().leftOpen }) },
    { id: "right", section: "Navigation", label: "Toggle costs and review panel", shortcut: key("TOGGLE_RIGHT_SIDEBAR"), run: () => app.update({ rightOpen: !app.get().rightOpen }) },
    { id: "review", section: "Navigation", label: "Show review (diff)", run: () => app.update({ rightOpen: true, rightTab: "review" }) },
    { id: "costs", section: "Navigation", label: "Show costs", run: () => app.update({ rightOpen: true, rightTab: "costs" }) },
    { id: "archived", section: "Navigation", label: s.showArchived ? "Hide archived workspaces" : "Show archived workspaces", run: () => app.update({ showArchived: !s.showArchived, leftOpen: true }) },
    { id: "settings", section: "Settings", label: "Open settings", shortcut: key("OPEN_SETTINGS"), run: () => openDialog({ kind: "settings" }) },
    { id: "signout", section: "Settings", label: "Sign out", run: () => void signOut() },
  ];
  if (ws && s.caps.fork && !ws.scratch) {
    out.push({ id: "fork", section: "Workspaces", label: "Fork workspace", detail: ws.title || ws.name, run: () => openDialog({ kind: "fork", workspaceId: ws.id }) });
  }
  if (ws && s.caps.mcp) {
    out.push({ id: "workspace-mcp", section: "Workspaces", label: "Workspace MCP servers", detail: ws.title || ws.name, run: () => openDialog({ kind: "workspace-mcp", workspaceId: ws.id }) });
  }
  if (ws && s.caps.rename) {
    out.push({ id: "rename", section: "Workspaces", label: "Rename workspace", detail: ws.title || ws.name, run: () => openDialog({ kind: "rename", workspaceId: ws.id }) });
  }
  if (ws && s.caps.archive) {
    out.push({
      id: "archive",
      section: "Workspaces",
      label: "Archive workspace",
      detail: ws.title || ws.name,
      run: () => void archiveWorkspace(ws.id, true).catch((x: unknown) => toast(errorMessage(x))),
    });
  }
  if (ws && s.caps.delete) {
    out.push({ id: "delete", section: "Workspaces", label: "Delete workspace", detail: ws.title || ws.name, run: () => openDialog({ kind: "delete", workspaceId: ws.id }) });
  }
  if (ws) {
    out.push(
      { id: "focus", section: "Chat", label: "Focus chat input", shortcut: key("FOCUS_INPUT"), run: focusComposer },
      { id: "bottom", section: "Chat", label: "Jump to bottom", shortcut: key("JUMP_TO_BOTTOM"), run: jumpToBottom },
      { id: "interrupt", section: "Chat", label: "Interrupt the running turn", shortcut: key("INTERRUPT"), run: () => void interruptCurrent() },
      { id: "notify", section: "Chat", label: ws.notifyOnResponse ? "Stop notifying on all responses" : "Notify on all responses", shortcut: key("TOGGLE_NOTIFY"), run: () => void toggleNotifyOnResponse() },
      { id: "mode", section: "Modes", label: ws.agent === "plan" ? "Switch to Exec mode" : "Switch to Plan mode", shortcut: key("TOGGLE_MODE"), run: () => void toggleMode() },
      { id: "agent-picker", section: "Modes", label: "Choose agent", shortcut: key("OPEN_AGENT_PICKER"), run: () => openPicker("agent") },
      { id: "cycle-agent", section: "Modes", label: "Cycle agent", shortcut: key("CYCLE_AGENT"), run: () => void cycleAgent() },
      { id: "cycle-model", section: "Models", label: "Cycle model", shortcut: key("CYCLE_MODEL"), run: () => void cycleModel() },
      { id: "think-up", section: "Models", label: "Increase thinking level", shortcut: key("THINKING_UP"), run: () => void stepThinkingLevel(1) },
      { id: "think-down", section: "Models", label: "Decrease thinking level", shortcut: key("THINKING_DOWN"), run: () => void stepThinkingLevel(-1) },
    );
    for (const m of s.models?.models ?? []) {
      if (!m.usable) continue;
      out.push({
        id: `model:${m.model}`,
        section: "Models",
        label: `Change model: ${entryLabel(s.models, m)}`,
        detail: m.model,
        run: () => void setModel(m.model),
      });
    }
  }
  return out;
}

function workspaceEntries(): Entry[] {
  const s = app.get();
  return s.workspaces
    .filter((w) => w.archivedAt === null)
    .map((w) => ({
      id: `ws:${w.id}`,
      section: w.projectName,
      label: w.title || w.name,
      detail: [w.branch, modelLabel(s.models, w.model)].filter(Boolean).join(" · "),
      run: () => selectWorkspace(w.id),
      statusFor: w.id,
    }));
}

function slashEntries(): Entry[] {
  const s = app.get();
  const ws = selectedWorkspace(s);
  return s.slash.map((c) => ({
    id: `slash:${c.name}`,
    section: "Slash commands",
    label: `/${c.name}`,
    detail: c.description,
    run: () => {
      if (ws) insertComposerText(ws.id, slashInsertion(c));
    },
  }));
}

function filtered(query: string): Entry[] {
  let list: Entry[];
  let q = query;
  if (query.startsWith(">")) {
    list = commandEntries();
    q = query.slice(1);
  } else if (query.startsWith("/")) {
    list = slashEntries();
    q = query.slice(1);
  } else {
    list = workspaceEntries();
  }
  q = q.trim();
  if (!q) return list;
  return list
    .map((e) => ({ e, score: fuzzyScore(`${e.label} ${e.detail ?? ""} ${e.section}`, q) }))
    .filter((x): x is { e: Entry; score: number } => x.score !== null)
    .sort((a, b) => b.score - a.score)
    .map((x) => x.e);
}

function PaletteStatus(props: { id: string }) {
  const status = useStore(app, (s) => s.statuses[props.id]);
  return <StatusDot status={status} />;
}

export function Palette() {
  const initial = useStore(app, (s) => s.paletteInitial);
  const [query, setQuery] = useState(initial);
  const [index, setIndex] = useState(0);
  const input = useRef<HTMLInputElement>(null);
  const list = useRef<HTMLDivElement>(null);
  const entries = filtered(query);
  const active = Math.min(index, Math.max(0, entries.length - 1));

  useEffect(() => {
    input.current?.focus();
  }, []);

  useEffect(() => {
    list.current?.querySelector(".menu-item.active")?.scrollIntoView({ block: "nearest" });
  }, [active]);

  const run = (e: Entry | undefined) => {
    if (!e) return;
    close();
    e.run();
  };

  const mode = query.startsWith(">") ? "commands" : query.startsWith("/") ? "slash" : "workspaces";
  let lastSection = "";
  return (
    <div className="overlay" onMouseDown={(e) => e.target === e.currentTarget && close()}>
      <div className="dialog palette" role="dialog" aria-modal="true" aria-label="Command palette">
        <input
          ref={input}
          value={query}
          aria-label="Command palette input"
          role="combobox"
          aria-expanded="true"
          aria-controls="palette-list"
          placeholder="Switch workspace, > for commands, / for slash commands"
          onChange={(e) => {
            setQuery(e.target.value);
            setIndex(0);
          }}
          onKeyDown={(e) => {
            if (e.key === "ArrowDown" || (e.key === "n" && e.ctrlKey)) {
              e.preventDefault();
              setIndex((active + 1) % Math.max(1, entries.length));
            } else if (e.key === "ArrowUp" || (e.key === "p" && e.ctrlKey && !e.shiftKey)) {
              e.preventDefault();
              setIndex((active - 1 + entries.length) % Math.max(1, entries.length));
            } else if (e.key === "Enter") {
              e.preventDefault();
              run(entries[active]);
            } else if (e.key === "Escape") {
              e.preventDefault();
              e.stopPropagation();
              close();
            }
          }}
        />
        <div className="palette-list" id="palette-list" role="listbox" ref={list} data-mode={mode}>
          {entries.length === 0 ? <div className="menu-item faint">Nothing matches.</div> : null}
          {entries.map((e, i) => {
            const header = e.section !== lastSection ? e.section : null;
            lastSection = e.section;
            return (
              <div key={e.id}>
                {header ? <div className="palette-section">{header}</div> : null}
                <button
                  type="button"
                  role="option"
                  aria-selected={i === active}
                  className={`menu-item ${i === active ? "active" : ""}`}
                  data-entry={e.id}
                  onMouseMove={() => i !== active && setIndex(i)}
                  onClick={() => run(e)}
                >
                  {e.statusFor ? <PaletteStatus id={e.statusFor} /> : null}
                  <span className="grow">
                    {e.label}
                    {e.detail ? <div className="desc">{e.detail}</div> : null}
                  </span>
                  {e.shortcut ? <kbd className="kbd-hint">{e.shortcut}</kbd> : null}
                </button>
              </div>
            );
          })}
        </div>
      </div>
    </div>
  );
}
