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
  SlashCommand,
  Workspace,
  WorkspaceStatus,
} from "../api/types";
import { capabilitiesOf, NO_CAPABILITIES, routesOf, type Capabilities, type OpenApiDoc } from "../lib/capabilities";
import { drafts } from "../lib/drafts";
import { hashForWorkspace, workspaceFromHash } from "../lib/route";
import { Store } from "../lib/store";
import { noteBackgroundEvents } from "./background";
import { noteActivity } from "./activity";
import { loadExternalAgents } from "./externalAgents";
import { applyInboxMessage } from "./inbox";
import { showNotice } from "./notifications";
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
/** Why the sign-in page is shown, when the page knows: the link's token was refused, or this
 *  browser was signed in and that sign-in ended (another token, a revoked session). */
export type SigninNotice = "link-failed" | "session-ended" | null;
export type RightTab = "costs" | "review";
export type Dialog =
  | { kind: "none" }
  | { kind: "new-workspace"; projectPath: string | null }
  | { kind: "add-project" }
  | { kind: "delete"; workspaceId: string }
  | { kind: "fork"; workspaceId: string }
  | { kind: "rename"; workspaceId: string }
  | { kind: "workspace-mcp"; workspaceId: string }
  | { kind: "settings" };

/** The composer's footer menus; one is open at a time (keybinds and `/model` open them too). */
export type Picker = "model" | "thinking" | "agent" | "permissions";

export interface AppState {
  auth: AuthState;
  caps: Capabilities;
  signinNotice: SigninNotice;
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
  /** The socket was open at least once: a later "connecting" or "closed" is a lost server. */
  everConnected: boolean;
  /** Below the medium breakpoint: the projects sidebar is a drawer over the chat. */
  narrow: boolean;
  /** Below the wide breakpoint: the costs and review panel is a drawer over the chat. */
  rightDrawer: boolean;
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
  /** A new scratch chat's draft is on screen (nothing is made before its first message). */
  scratchDraft: boolean;
}

const WIDE_QUERY = "(min-width: 1100px)";
const MEDIUM_QUERY = "(min-width: 760px)";

function matches(query: string): boolean {
  return typeof window !== "undefined" && window.matchMedia(query).matches;
}

export const app = new Store<AppState>({
  auth: "checking",
  caps: NO_CAPABILITIES,
  signinNotice: null,
  projects: [],
  workspaces: [],
  statuses: {},
  selectedId: null,
  models: null,
  slash: [],
  agents: [],
  picker: null,
  connection: "connecting",
  everConnected: false,
  narrow: !matches(MEDIUM_QUERY),
  rightDrawer: !matches(WIDE_QUERY),
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
  scratchDraft: false,
});

/** Whether the sidebars are drawers over the chat (narrow screens) rather than columns. */
export function isNarrow(): boolean {
  return app.get().narrow;
}

/** Follow the window across the breakpoints. A sidebar that turns into a drawer closes (the chat
 *  must stay visible); one that turns back into a column gets the state it had as a column. */
function watchLayout(): void {
  if (typeof window === "undefined" || typeof window.matchMedia !== "function") return;
  const asColumn = { left: true, right: true };
  window.matchMedia(MEDIUM_QUERY).addEventListener("change", (e) => {
    if (e.matches) app.update({ narrow: false, leftOpen: asColumn.left });
    else {
      asColumn.left = app.get().leftOpen;
      app.update({ narrow: true, leftOpen: false });
    }
  });
  window.matchMedia(WIDE_QUERY).addEventListener("change", (e) => {
    if (e.matches) app.update({ rightDrawer: false, rightOpen: asColumn.right });
    else {
      asColumn.right = app.get().rightOpen;
      app.update({ rightDrawer: true, rightOpen: false });
    }
  });
}

watchLayout();

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
    noteActivity(id, events);
    noteBackgroundEvents(id, events);
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
  onInbox(message) {
    applyInboxMessage(message);
  },
  onNotification(notice) {
    if (typeof window === "undefined" || typeof window.Notification === "undefined") return;
    void showNotice(notice, (id) => selectWorkspace(id));
  },
  onConnection(connection) {
    app.update(connection === "open" ? { connection, everConnected: true } : { connection });
  },
  onUnauthorized(sessionEnded) {
    signedOut(sessionEnded ? "session-ended" : undefined);
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

/** Try to reach the server now instead of waiting out the reconnect backoff. */
export function retryConnection(): void {
  socket.retryNow();
}

// ---- Auth -----------------------------------------------------------------------------------

/** Set when a request of the current session attempt was refused (401). */
let refused = false;

/** Show the sign-in page. A page that was signed in and is refused now lost its sign-in: the
 *  page says so (`session-ended`) unless the caller knows better. */
function signedOut(notice?: SigninNotice): void {
  refused = true;
  socket.stop();
  const s = app.get();
  const ended = s.auth === "signed-in" || s.signinNotice === "session-ended";
  app.update({ auth: "signed-out", signinNotice: notice !== undefined ? notice : ended ? "session-ended" : null });
}

setUnauthorizedHandler(() => signedOut());

export async function boot(): Promise<void> {
  const params = new URLSearchParams(location.search);
  const failed = params.get("signin") === "failed";
  if (failed) {
    history.replaceState(null, "", location.pathname + location.hash);
    app.update({ auth: "signed-out", signinNotice: "link-failed" });
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
  if (st && st.authRequired && !st.authenticated) signedOut(st.sessionEnded ? "session-ended" : null);
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
    drafts.clear(); // signing out on purpose leaves nothing typed behind in this browser
    signedOut(null);
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
  app.update({ auth: "signed-in", signinNotice: null });
  const named = app.get().workspaces.find((w) => w.id === selected);
  const pick = named?.id ?? visibleWorkspaces(app.get())[0]?.id ?? null;
  if (selected && !named) toast(noSuchWorkspace(selected));
  if (pick) selectWorkspace(pick, "replace");
  followRouteChanges();
  await caps;
  void loadSlash();
  void loadAgents();
  void loadExternalAgents();
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
    // The workspace on screen was deleted elsewhere: the address no longer names it.
    if (app.get().selectedId === null && selectedFromHash() !== null && app.get().auth === "signed-in") {
      writeRoute(null, "replace");
    }
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
  return workspaceFromHash(location.hash);
}

function noSuchWorkspace(id: string): string {
  return `There is no workspace "${id.slice(0, 80)}" on this server (it may have been deleted).`;
}

/** Write the route of `id` into the address: a new history entry (so Back returns) or in place. */
function writeRoute(id: string | null, how: "push" | "replace"): void {
  const hash = hashForWorkspace(id);
  if (location.hash === hash) return;
  const url = location.pathname + location.search + hash;
  if (how === "push") history.pushState(null, "", url);
  else history.replaceState(null, "", url);
}

let followingRoutes = false;

/** Select what the address names whenever it changes under the page: a pasted link, Back and
 *  Forward, a script setting `location.hash`. */
function followRouteChanges(): void {
  if (followingRoutes || typeof window === "undefined") return;
  followingRoutes = true;
  window.addEventListener("hashchange", () => void applyRoute());
  window.addEventListener("popstate", () => void applyRoute());
}

async function applyRoute(): Promise<void> {
  if (app.get().auth !== "signed-in") return;
  const id = selectedFromHash();
  if (id === null) {
    // The bare address: the first workspace, as when the page opens.
    const first = visibleWorkspaces(app.get())[0]?.id ?? null;
    if (first !== null) selectWorkspace(first, "replace");
    return;
  }
  if (id === app.get().selectedId) return;
  // A link to a workspace made elsewhere (another tab, `xum run`) may not be listed yet.
  if (!app.get().workspaces.some((w) => w.id === id)) await loadWorkspaces();
  if (selectedFromHash() !== id) return; // the route moved on while the list loaded
  if (app.get().workspaces.some((w) => w.id === id)) {
    applySelection(id);
    return;
  }
  toast(noSuchWorkspace(id));
  writeRoute(app.get().selectedId, "replace");
}

/** Show workspace `id` (null: none). A user's choice is a new history entry ("push"); a choice
 *  the page makes for them (on open, after a deletion) replaces the current one. */
export function selectWorkspace(id: string | null, how: "push" | "replace" = "push"): void {
  writeRoute(id, how);
  applySelection(id);
}

/** Everything selecting a workspace does, except writing the route. */
function applySelection(id: string | null): void {
  const prev = app.get().selectedId;
  app.update({ selectedId: id, scratchDraft: false });
  if (isNarrow()) app.update({ leftOpen: false });
  if (id === null) return;
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

export function openPicker(picker: Picker | null): void {
  app.update({ picker });
}

/** Stop following a deleted workspace and drop its transcript. */
export function forgetWorkspace(id: string): void {
  socket.unsubscribe(id);
  transcripts.delete(id);
  drafts.remove(id);
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
