// What the user does to workspaces and projects: send, interrupt, create, fork, rename, archive,
// delete. Each calls the server and applies its answer to the app state.

import { api, qs } from "../api/http";
import type { ImageRef, Project, SentMessage, Workspace } from "../api/types";
import { app, forgetWorkspace, loadWorkspaces, orderedWorkspaces, selectWorkspace, toast } from "./app";

/** Send a message. A chat command (`/model x`, `/fork`) is carried out by the server; its
 *  result (the changed workspace, or the new fork, which is then selected) is applied here. */
export async function sendMessage(
  id: string,
  text: string,
  when: "step" | "turn",
  images: readonly ImageRef[] = [],
): Promise<SentMessage> {
  const body = images.length ? { text, when, images: images.map((i) => ({ sha256: i.sha256, name: i.name })) } : { text, when };
  const sent = await api<SentMessage>("POST", `/api/workspaces/${encodeURIComponent(id)}/messages`, body);
  const ws = sent.workspace;
  if (sent.disposition === "command" && ws) {
    if (sent.command === "fork") addWorkspace(ws);
    else replaceWorkspace(ws);
  }
  if (sent.forkMessageError) toast(`The fork was made, but its first message did not start: ${sent.forkMessageError.message}`);
  return sent;
}

export async function interrupt(id: string): Promise<void> {
  await api("POST", `/api/workspaces/${encodeURIComponent(id)}/interrupt`);
}

export async function clearQueue(id: string): Promise<void> {
  await api("DELETE", `/api/workspaces/${encodeURIComponent(id)}/queue`);
}

export async function patchWorkspace(
  id: string,
  patch: Partial<Pick<Workspace, "title" | "model" | "thinking" | "agent" | "permissions" | "notifyOnResponse">>,
): Promise<void> {
  const ws = await api<Workspace>("PATCH", `/api/workspaces/${encodeURIComponent(id)}`, patch);
  replaceWorkspace(ws);
}

export function replaceWorkspace(ws: Workspace): void {
  app.set((s) => ({ ...s, workspaces: s.workspaces.map((w) => (w.id === ws.id ? ws : w)) }));
}

export async function createWorkspace(body: {
  projectPath: string;
  runtime: { type: string; host?: string; image?: string; shareCredentials?: boolean; config?: string };
  name?: string;
  title?: string;
  model?: string;
  externalAgent?: string;
}): Promise<Workspace> {
  const ws = await api<Workspace>("POST", "/api/workspaces", body);
  app.set((s) => ({
    ...s,
    workspaces: [ws, ...s.workspaces.filter((w) => w.id !== ws.id)],
    statuses: { ...s.statuses, [ws.id]: ws.status },
  }));
  selectWorkspace(ws.id);
  return ws;
}

/** A workspace just made (a fork): listed first and selected. */
function addWorkspace(ws: Workspace): void {
  app.set((s) => ({
    ...s,
    workspaces: [ws, ...s.workspaces.filter((w) => w.id !== ws.id)],
    statuses: { ...s.statuses, [ws.id]: ws.status },
  }));
  selectWorkspace(ws.id);
}

export async function forkWorkspace(id: string, name?: string): Promise<Workspace> {
  const body = name ? { name } : {};
  const ws = await api<Workspace>("POST", `/api/workspaces/${encodeURIComponent(id)}/fork`, body);
  addWorkspace(ws);
  return ws;
}

export async function renameWorkspace(id: string, name: string): Promise<Workspace> {
  const ws = await api<Workspace>("POST", `/api/workspaces/${encodeURIComponent(id)}/rename`, { name });
  replaceWorkspace(ws);
  return ws;
}

export async function archiveWorkspace(id: string, archived: boolean): Promise<void> {
  const ws = await api<Workspace>(
    "POST",
    `/api/workspaces/${encodeURIComponent(id)}/${archived ? "archive" : "unarchive"}`,
  );
  replaceWorkspace(ws);
  if (archived && app.get().selectedId === id) {
    const next = orderedWorkspaces(app.get()).find((w) => w.id !== id);
    selectWorkspace(next?.id ?? null, "replace");
  }
}

export async function deleteWorkspace(id: string, force: boolean): Promise<void> {
  await api("DELETE", `/api/workspaces/${encodeURIComponent(id)}${qs({ force: force || null })}`);
  forgetWorkspace(id);
  const wasSelected = app.get().selectedId === id;
  app.set((s) => ({ ...s, workspaces: s.workspaces.filter((w) => w.id !== id) }));
  if (wasSelected) selectWorkspace(orderedWorkspaces(app.get())[0]?.id ?? null, "replace");
}

export async function addProject(path: string): Promise<Project> {
  const project = await api<Project>("POST", "/api/projects", { path });
  await loadWorkspaces();
  return project;
}
