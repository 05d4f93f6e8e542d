// Workspace commands shared by keybinds, the palette and the composer's pickers.

import { errorMessage } from "../api/http";
import type { AgentInfo, PermissionMode } from "../api/types";
import { nextModel, stepThinking, thinkingLevels } from "../lib/models";
import { app, selectedWorkspace, toast } from "./app";
import { interrupt, patchWorkspace } from "./actions";
import { ensurePermission } from "./notifications";

function current() {
  return selectedWorkspace(app.get());
}

async function guarded(fn: () => Promise<void>): Promise<void> {
  try {
    await fn();
  } catch (exc) {
    toast(errorMessage(exc));
  }
}

export function cycleModel(): Promise<void> {
  const ws = current();
  if (!ws) return Promise.resolve();
  const next = nextModel(app.get().models, ws.model);
  if (!next || next === ws.model) return Promise.resolve();
  return guarded(() => patchWorkspace(ws.id, { model: next }));
}

export function setModel(model: string): Promise<void> {
  const ws = current();
  if (!ws) return Promise.resolve();
  return guarded(() => patchWorkspace(ws.id, { model }));
}

export function stepThinkingLevel(delta: 1 | -1): Promise<void> {
  const ws = current();
  if (!ws) return Promise.resolve();
  const levels = thinkingLevels(app.get().models, ws.model);
  const next = stepThinking(levels, ws.thinking, delta);
  if (next === ws.thinking) return Promise.resolve();
  return guarded(() => patchWorkspace(ws.id, { thinking: next }));
}

export function setThinking(level: string): Promise<void> {
  const ws = current();
  if (!ws) return Promise.resolve();
  return guarded(() => patchWorkspace(ws.id, { thinking: level }));
}

export function toggleMode(): Promise<void> {
  const ws = current();
  if (!ws) return Promise.resolve();
  return guarded(() => patchWorkspace(ws.id, { agent: ws.agent === "plan" ? "exec" : "plan" }));
}

/** An agent the picker offers. */
export type AgentChoice = Pick<AgentInfo, "id" | "name" | "description" | "color">;

/** The agents to offer: the workspace's catalog once loaded (`listed`, by default the app
 * state's), else the two built-in modes. */
export function agentChoices(listed: AgentChoice[] = app.get().agents): AgentChoice[] {
  if (listed.length > 0) return listed;
  return [
    { id: "exec", name: "Exec", description: "Make changes", color: null },
    { id: "plan", name: "Plan", description: "Read, then propose a plan", color: null },
  ];
}

/** Ctrl+.: the next agent of the picker's list. */
export function cycleAgent(): Promise<void> {
  const ws = current();
  if (!ws) return Promise.resolve();
  const list = agentChoices();
  const i = list.findIndex((a) => a.id === ws.agent);
  const next = list[(i + 1) % list.length];
  if (!next || next.id === ws.agent) return Promise.resolve();
  return guarded(() => patchWorkspace(ws.id, { agent: next.id }));
}

export function setAgent(agent: string): Promise<void> {
  const ws = current();
  if (!ws) return Promise.resolve();
  return guarded(() => patchWorkspace(ws.id, { agent }));
}

export function interruptCurrent(): Promise<void> {
  const ws = current();
  if (!ws) return Promise.resolve();
  const st = app.get().statuses[ws.id] ?? ws.status;
  if (st.state !== "streaming") return Promise.resolve();
  return guarded(() => interrupt(ws.id));
}

/** Turn "Notify on all responses" on or off for the workspace on screen (the bell); turning it
 *  on asks for the browser's permission the first time (docs/notifications.md). */
export function toggleNotifyOnResponse(): Promise<void> {
  const ws = current();
  if (!ws) return Promise.resolve();
  const on = !ws.notifyOnResponse;
  if (on) void ensurePermission();
  return guarded(() => patchWorkspace(ws.id, { notifyOnResponse: on }));
}

export function setPermissions(mode: PermissionMode): Promise<void> {
  const ws = current();
  if (!ws) return Promise.resolve();
  return guarded(() => patchWorkspace(ws.id, { permissions: mode }));
}
