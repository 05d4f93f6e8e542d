// Each workspace's background processes, for the strip above the composer (Ctrl+Shift+J): what
// runs, since when, its last lines, and stop. The server sends the list when a process starts or
// ends (`background-processes`, without the last lines); the strip asks for the full rows
// (GET /api/workspaces/:id/background) when that happens and while it is open.

import { api } from "../api/http";
import type { BackgroundProcessRow, EngineEvent } from "../api/types";
import { Store } from "../lib/store";

/** workspace id -> its processes (running ones and those kept after they ended), newest last. */
export const background = new Store<Readonly<Record<string, readonly BackgroundProcessRow[]>>>({});

/** Whether the strip is expanded (one flag: it follows the workspace on screen). */
export const stripOpen = new Store<boolean>(false);

const NONE: readonly BackgroundProcessRow[] = [];

export function processesOf(all: Readonly<Record<string, readonly BackgroundProcessRow[]>>, id: string): readonly BackgroundProcessRow[] {
  return all[id] ?? NONE;
}

/** Rows from an event: keep the last lines the previous full answer had, until the next one. */
function merge(prev: readonly BackgroundProcessRow[], next: readonly BackgroundProcessRow[]): BackgroundProcessRow[] {
  const lines = new Map(prev.map((p) => [p.process_id, p.last_lines]));
  return next.map((row) => (row.last_lines === undefined ? { ...row, last_lines: lines.get(row.process_id) } : row));
}

function store(workspaceId: string, rows: readonly BackgroundProcessRow[]): void {
  background.set((all) => ({ ...all, [workspaceId]: merge(processesOf(all, workspaceId), rows) }));
}

/** Take the list from a workspace's events; then ask for the last lines. */
export function noteBackgroundEvents(workspaceId: string, events: readonly EngineEvent[]): void {
  let latest: readonly BackgroundProcessRow[] | null = null;
  for (const e of events) if (e.type === "background-processes") latest = e.processes;
  if (latest === null) return;
  store(workspaceId, latest);
  void refreshBackground(workspaceId);
}

const asking = new Set<string>();

/** The full rows (with their last lines) from the server; one request at a time per workspace. */
export async function refreshBackground(workspaceId: string): Promise<void> {
  if (asking.has(workspaceId)) return;
  asking.add(workspaceId);
  try {
    const got = await api<{ processes: BackgroundProcessRow[] }>(
      "GET",
      `/api/workspaces/${encodeURIComponent(workspaceId)}/background`,
    );
    background.set((all) => ({ ...all, [workspaceId]: got.processes }));
  } catch {
    // The workspace went away or the server is unreachable: keep what is shown.
  } finally {
    asking.delete(workspaceId);
  }
}

/** Stop one process (an explicit stop: its monitor wakes nobody). */
export async function stopBackground(workspaceId: string, processId: string): Promise<void> {
  const path = `/api/workspaces/${encodeURIComponent(workspaceId)}/background/${encodeURIComponent(processId)}/stop`;
  const got = await api<{ process: BackgroundProcessRow }>("POST", path);
  background.set((all) => ({
    ...all,
    [workspaceId]: processesOf(all, workspaceId).map((p) => (p.process_id === processId ? got.process : p)),
  }));
}
