// Application state and the actions that change it. Server data (projects, workspaces, models,
// slash commands) is fetched in bulk; live changes arrive over the event socket.

import { api, ApiError, errorMessage, qs, setUnauthorizedHandler } from "../api/http";
import { EventSocket, type ConnectionState } from "../api/socket";
import type {
  AgentInfo,
  AuthStatus,
  HistoryPage,
  ModelsInfo,
  PendingQuestion,
  Project,
  SentMessage,
  SlashCommand,
  Workspace,
  WorkspaceStatus,
} from "../api/types";
import { capabilitiesOf, NO_CAPABILITIES, routesOf, type Capabilities, type OpenApiDoc } from "../lib/capabilities";
import { Store } from "../lib/store";
import {
  applyEvents,
  applyPartial,
  applyTailPage,
  emptyTranscript,
  prependPage,
  resetInFlight,
  type TranscriptState,
} from "./transcript";

export type AuthState = "checking" | "signed-out" | "signed-in";
export type RightTab = "costs" | "review";
export type Dialog =
  | { kind: "none" }
  | { kind: "new-workspace"; projectPath: string | null }
  | { kind: "add-project" }
  | { kind: "delete"; workspaceId: string }
  | { kind: "fork"; workspaceId: string }
  | { kind: "rename"; workspaceId: string }
  | { kind: "settings" };

/** The composer's footer menus; one is open at a time (keybinds and `/model` open them too). */
export type Picker = "model" | "thinking" | "agent" | "permissions";

export interface AppState {
  auth: AuthState;
  caps: Capabilities;
  signinFailed: boolean;
  projects: Project[];
  workspaces: Workspace[];
  statuses: Readonly<Record<string, WorkspaceStatus>>;
  selectedId: string | null;
  models: ModelsInfo | null;
  slash: SlashCommand[];
  /** The selected workspace's selectable agents (empty until loaded). */
  agents: AgentInfo[];
  picker: Picker | null;
  connection: ConnectionState;
  leftOpen: boolean;
  rightOpen: boolean;
  rightTab: RightTab;
  paletteOpen: boolean;
  paletteInitial: string;
  dialog: Dialog;
  toast: string | null;
  /** Bumped whenever a turn ends somewhere, so panels that show derived data refresh. */
  turnEpoch: number;
  showArchived: boolean;
  /** Questions waiting for the user, by workspace. */
  questions: Readonly<Record<string, PendingQuestion>>;
}

const WIDE_QUERY = "(min-width: 1100px)";
const MEDIUM_QUERY = "(min-width: 760px)";

function matches(query: string): boolean {
  return typeof window !== "undefined" && window.matchMedia(query).matches;
}

export const app = new Store<AppState>({
  auth: "checking",
  caps: NO_CAPABILITIES,
  signinFailed: false,
  projects: [],
  workspaces: [],
  statuses: {},
  selectedId: null,
  models: null,
  slash: [],
  agents: [],
  picker: null,
  connection: "connecting",
  leftOpen: matches(MEDIUM_QUERY),
  rightOpen: matches(WIDE_QUERY),
  rightTab: "costs",
  paletteOpen: false,
  paletteInitial: "",
  dialog: { kind: "none" },
  toast: null,
  turnEpoch: 0,
  showArchived: false,
  questions: {},
});

/** Whether the sidebars are drawers over the chat (narrow screens) rather than columns. */
export function isNarrow(): boolean {
  return !matches(MEDIUM_QUERY);
}
export function isRightDrawer(): boolean {
  return !matches(WIDE_QUERY);
}

// ---- Transcripts ----------------------------------------------------------------------------

const transcripts = new Map<string, Store<TranscriptState>>();

export function transcriptStore(workspaceId: string): Store<TranscriptState> {
  let store = transcripts.get(workspaceId);
  if (!store) {
    store = new Store(emptyTranscript());
    transcripts.set(workspaceId, store);
  }
  return store;
}

export const HISTORY_PAGE = 200;

const socket = new EventSocket({
  onResubscribe(id) {
    transcriptStore(id).set(resetInFlight);
  },
  onEvents(id, events) {
    transcriptStore(id).set((t) => applyEvents(t, events));
    if (events.some((e) => e.type === "turn-end")) {
      app.set((s) => ({ ...s, turnEpoch: s.turnEpoch + 1 }));
    }
  },
  onPartial(id, message) {
    transcriptStore(id).set((t) => applyPartial(t, message));
  },
  onSubscribed(id, status) {
    setStatus(id, status);
  },
  onStatus(id, status) {
    setStatus(id, status);
  },
  onWorkspacesChanged() {
    void loadWorkspaces();
  },
  onQuestion(id, question, closedId) {
    app.set((s) => {
      const current = s.questions[id];
      if (question === null && current && closedId !== undefined && current.questionId !== closedId) return s;
      const questions = { ...s.questions };
      if (question) questions[id] = question;
      else delete questions[id];
      return { ...s, questions };
    });
  },
  onConnection(connection) {
    app.update({ connection });
  },
  onUnauthorized() {
    signedOut();
  },
});

function setStatus(id: string, status: WorkspaceStatus): void {
  app.set((s) => {
    // A turn that just finished (or errored) changes costs and diffs: panels refetch on this.
    const settled = s.statuses[id]?.state === "streaming" && status.state !== "streaming";
    return {
      ...s,
      statuses: { ...s.statuses, [id]: status },
      turnEpoch: settled ? s.turnEpoch + 1 : s.turnEpoch,
    };
  });
}

/** Test hook: drop the socket so the reconnect path runs (used by the browser tests). */
export function dropConnectionForTests(): void {
  socket.reconnectNow();
}

// ---- Auth -----------------------------------------------------------------------------------

/** Set when a request of the current session attempt was refused (401). */
let refused = false;

function signedOut(): void {
  refused = true;
  socket.stop();
  app.update({ auth: "signed-out" });
}

setUnauthorizedHandler(signedOut);

export async function boot(): Promise<void> {
  const params = new URLSearchParams(location.search);
  const failed = params.get("signin") === "failed";
  if (failed) {
    history.replaceState(null, "", location.pathname + location.hash);
    app.update({ auth: "signed-out", signinFailed: true });
    return;
  }
  // Ask whether this browser is signed in while the first data is already on its way: a 401
  // on any request shows the sign-in screen, so the common case waits for no extra round trip.
  const status = api<AuthStatus>("GET", "/api/auth/status").catch((exc: unknown) => {
    app.update({ auth: "signed-out", toast: errorMessage(exc) });
    return null;
  });
  const session = startSession();
  const st = await status;
  if (st && st.authRequired && !st.authenticated) signedOut();
  await session;
}

export async function signIn(token: string): Promise<string | null> {
  try {
    await api("POST", "/api/auth/login", { token });
  } catch (exc) {
    if (exc instanceof ApiError && exc.status === 401) return "That token is not right.";
    return errorMessage(exc);
  }
  await startSession();
  return null;
}

export async function signOut(): Promise<void> {
  try {
    await api("POST", "/api/auth/logout");
  } finally {
    signedOut();
  }
}

async function startSession(): Promise<void> {
  refused = false;
  socket.start();
  const selected = selectedFromHash();
  // The transcript of the workspace in the address loads alongside the lists, not after them.
  if (selected) void loadTail(selected);
  // What the server routes (fork, archive, slash registry...) is not needed for the first paint.
  const caps = loadCapabilities();
  await Promise.all([loadWorkspaces(), loadModels()]);
  if (refused) return;
  app.update({ auth: "signed-in", signinFailed: false });
  const ws = app.get().workspaces.filter((w) => w.archivedAt === null);
  const pick = ws.find((w) => w.id === selected)?.id ?? ws[0]?.id ?? null;
  if (pick) selectWorkspace(pick);
  await caps;
  void loadSlash();
  void loadAgents();
}

// ---- Loading --------------------------------------------------------------------------------

export async function loadWorkspaces(): Promise<void> {
  try {
    const [projects, workspaces] = await Promise.all([
      api<{ projects: Project[] }>("GET", "/api/projects"),
      api<{ workspaces: Workspace[] }>("GET", "/api/workspaces?archived=include"),
    ]);
    app.set((s) => {
      const statuses: Record<string, WorkspaceStatus> = { ...s.statuses };
      for (const w of workspaces.workspaces) statuses[w.id] ??= w.status;
      const selectedGone =
        s.selectedId !== null && !workspaces.workspaces.some((w) => w.id === s.selectedId);
      return {
        ...s,
        projects: projects.projects,
        workspaces: workspaces.workspaces,
        statuses,
        selectedId: selectedGone ? null : s.selectedId,
      };
    });
  } catch (exc) {
    if (!(exc instanceof ApiError && exc.status === 401)) toast(errorMessage(exc));
  }
}

export async function loadModels(): Promise<void> {
  try {
    app.update({ models: await api<ModelsInfo>("GET", "/api/settings/models") });
  } catch {
    // The pickers stay empty; settings shows the error.
  }
}

async function loadCapabilities(): Promise<void> {
  try {
    const doc = await api<OpenApiDoc>("GET", "/openapi.json");
    app.update({ caps: capabilitiesOf(routesOf(doc)) });
  } catch {
    app.update({ caps: NO_CAPABILITIES });
  }
}

/** Registry entries as the UI shows them: names without the leading slash, a usage hint. */
function normalizeSlash(c: SlashCommand & { argument_hint?: string; argumentHint?: string }): SlashCommand {
  return {
    name: c.name.replace(/^\//, ""),
    description: c.description ?? "",
    usage: c.usage ?? c.argument_hint ?? c.argumentHint ?? null,
    kind: c.kind ?? null,
  };
}

interface SlashPayload {
  commands?: SlashCommand[];
  suggestions?: SlashCommand[];
}

async function loadSlash(): Promise<void> {
  // The server's slash registry decides what exists; nothing is shown when it has none.
  const s = app.get();
  const template = s.caps.slashPath;
  const perWorkspace = template?.includes("{}") ?? false;
  const forId = s.selectedId;
  if (!template || (perWorkspace && !forId)) {
    app.update({ slash: [] });
    return;
  }
  const path = perWorkspace ? template.replace("{}", encodeURIComponent(forId ?? "")) : template;
  // A per-workspace answer that arrives after the user moved on belongs to another workspace.
  const stale = () => perWorkspace && app.get().selectedId !== forId;
  try {
    const data = await api<SlashPayload | SlashCommand[]>("GET", path);
    if (stale()) return;
    const list = Array.isArray(data) ? data : (data.commands ?? data.suggestions ?? []);
    app.update({ slash: list.map(normalizeSlash) });
  } catch {
    if (!stale()) app.update({ slash: [] });
  }
}

/** The selected workspace's selectable agents (the picker, Ctrl+. cycling). */
export async function loadAgents(): Promise<void> {
  const forId = app.get().selectedId;
  if (!app.get().caps.agents || !forId) {
    app.update({ agents: [] });
    return;
  }
  try {
    const data = await api<{ agents: AgentInfo[] }>("GET", `/api/workspaces/${encodeURIComponent(forId)}/agents`);
    if (app.get().selectedId === forId) app.update({ agents: data.agents });
  } catch {
    if (app.get().selectedId === forId) app.update({ agents: [] });
  }
}

const tailLoads = new Map<string, Promise<boolean>>();

/** Fetch the newest page of a workspace's history once (later calls share the first). */
function loadTail(id: string): Promise<boolean> {
  const store = transcriptStore(id);
  if (store.get().loaded) return Promise.resolve(true);
  let pending = tailLoads.get(id);
  if (!pending) {
    pending = api<HistoryPage>(
      "GET",
      `/api/workspaces/${encodeURIComponent(id)}/history${qs({
        beforeSeq: Number.MAX_SAFE_INTEGER,
        limit: HISTORY_PAGE,
      })}`,
    )
      .then((page) => {
        store.set((t) => applyTailPage(t, page.events, page.hasMore));
        return true;
      })
      .catch((exc: unknown) => {
        toast(errorMessage(exc));
        return false;
      })
      .finally(() => tailLoads.delete(id));
    tailLoads.set(id, pending);
  }
  return pending;
}

/** Load the newest page of a workspace's history, then follow it live. */
async function openTranscript(id: string): Promise<void> {
  if (!(await loadTail(id))) return;
  if (app.get().selectedId === id || !socket.isSubscribed(id)) {
    socket.subscribe(id, transcriptStore(id).get().lastSeq);
  }
}

export async function loadOlder(id: string): Promise<void> {
  const store = transcriptStore(id);
  const t = store.get();
  if (!t.hasOlder || t.firstSeq === null) return;
  const page = await api<HistoryPage>(
    "GET",
    `/api/workspaces/${encodeURIComponent(id)}/history${qs({ beforeSeq: t.firstSeq, limit: HISTORY_PAGE })}`,
  );
  store.set((cur) => prependPage(cur, page.events, page.hasMore));
}

// ---- Selection ------------------------------------------------------------------------------

function selectedFromHash(): string | null {
  const m = /^#\/w\/([^/]+)$/.exec(location.hash);
  return m?.[1] ? decodeURIComponent(m[1]) : null;
}

export function selectWorkspace(id: string | null): void {
  const prev = app.get().selectedId;
  app.update({ selectedId: id });
  if (isNarrow()) app.update({ leftOpen: false });
  if (id === null) {
    history.replaceState(null, "", location.pathname + location.search);
    return;
  }
  history.replaceState(null, "", `#/w/${encodeURIComponent(id)}`);
  if (prev !== id) {
    app.update({ picker: null, agents: [] });
    if (app.get().caps.slashPath?.includes("{}")) void loadSlash();
    void loadAgents();
  }
  if (prev && prev !== id && socket.isSubscribed(prev)) {
    // Keep following workspaces that are busy so switching back is instant; drop idle ones.
    const st = app.get().statuses[prev];
    if (!st || st.state === "idle") socket.unsubscribe(prev);
  }
  void openTranscript(id);
}

export function visibleWorkspaces(state: AppState): Workspace[] {
  return state.workspaces.filter((w) => w.archivedAt === null);
}

/** Workspaces in sidebar order (grouped by project, in project order). */
export function orderedWorkspaces(state: AppState): Workspace[] {
  const out: Workspace[] = [];
  const live = visibleWorkspaces(state);
  for (const p of state.projects) out.push(...live.filter((w) => w.projectPath === p.path));
  out.push(...live.filter((w) => !state.projects.some((p) => p.path === w.projectPath)));
  return out;
}

export function stepWorkspace(delta: 1 | -1): void {
  const s = app.get();
  const list = orderedWorkspaces(s);
  if (list.length === 0) return;
  const i = list.findIndex((w) => w.id === s.selectedId);
  const next = list[(i + delta + list.length) % list.length];
  if (next) selectWorkspace(next.id);
}

export function selectedWorkspace(state: AppState): Workspace | null {
  return state.workspaces.find((w) => w.id === state.selectedId) ?? null;
}

// ---- Actions --------------------------------------------------------------------------------

let toastTimer: ReturnType<typeof setTimeout> | null = null;

export function toast(message: string | null): void {
  app.update({ toast: message });
  if (toastTimer) clearTimeout(toastTimer);
  toastTimer = null;
}

export function markRead(id: string, seq: number): void {
  const st = app.get().statuses[id];
  if (!st || (!st.unread && st.readSeq >= seq)) return;
  api<WorkspaceStatus>("POST", `/api/workspaces/${encodeURIComponent(id)}/read`, { seq })
    .then((status) => setStatus(id, status))
    .catch(() => undefined);
}

/** Send a message. A chat command (`/model x`, `/fork`) is carried out by the server; its
 *  result (the changed workspace, or the new fork, which is then selected) is applied here. */
export async function sendMessage(id: string, text: string, when: "step" | "turn"): Promise<SentMessage> {
  const sent = await api<SentMessage>("POST", `/api/workspaces/${encodeURIComponent(id)}/messages`, { text, when });
  const ws = sent.workspace;
  if (sent.disposition === "command" && ws) {
    if (sent.command === "fork") addWorkspace(ws);
    else replaceWorkspace(ws);
  }
  if (sent.forkMessageError) toast(`The fork was made, but its first message did not start: ${sent.forkMessageError.message}`);
  return sent;
}

export function openPicker(picker: Picker | null): void {
  app.update({ picker });
}

export async function interrupt(id: string): Promise<void> {
  await api("POST", `/api/workspaces/${encodeURIComponent(id)}/interrupt`);
}

export async function clearQueue(id: string): Promise<void> {
  await api("DELETE", `/api/workspaces/${encodeURIComponent(id)}/queue`);
}

export async function patchWorkspace(
  id: string,
  patch: Partial<Pick<Workspace, "title" | "model" | "thinking" | "agent" | "permissions">>,
): Promise<void> {
  const ws = await api<Workspace>("PATCH", `/api/workspaces/${encodeURIComponent(id)}`, patch);
  replaceWorkspace(ws);
}

export function replaceWorkspace(ws: Workspace): void {
  app.set((s) => ({ ...s, workspaces: s.workspaces.map((w) => (w.id === ws.id ? ws : w)) }));
}

export async function createWorkspace(body: {
  projectPath: string;
  runtime: { type: string; host?: string };
  name?: string;
  title?: string;
  model?: string;
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
    selectWorkspace(next?.id ?? null);
  }
}

export async function deleteWorkspace(id: string, force: boolean): Promise<void> {
  await api("DELETE", `/api/workspaces/${encodeURIComponent(id)}${qs({ force: force || null })}`);
  socket.unsubscribe(id);
  transcripts.delete(id);
  const wasSelected = app.get().selectedId === id;
  app.set((s) => ({ ...s, workspaces: s.workspaces.filter((w) => w.id !== id) }));
  if (wasSelected) selectWorkspace(orderedWorkspaces(app.get())[0]?.id ?? null);
}

export async function addProject(path: string): Promise<Project> {
  const project = await api<Project>("POST", "/api/projects", { path });
  await loadWorkspaces();
  return project;
}

export function openDialog(dialog: Dialog): void {
  app.update({ dialog, paletteOpen: false });
}

export function closeDialog(): void {
  app.update({ dialog: { kind: "none" } });
}

export function openPalette(initial = ""): void {
  app.update({ paletteOpen: true, paletteInitial: initial });
}

/** Answer a waiting approval request (docs/api.md). */
export async function answerApproval(
  workspaceId: string,
  requestId: string,
  decision: "once" | "always" | "deny",
  reason?: string,
): Promise<void> {
  await api("POST", `/api/workspaces/${encodeURIComponent(workspaceId)}/approvals/${encodeURIComponent(requestId)}`, {
    decision,
    reason: reason ?? null,
  });
}
