// The branch each workspace's checkout is on now, as git reports it. A workspace record names
// the branch xum made for it, but the agent can switch (`git checkout -b ...`): the header and
// the sidebar show what git says once it has been asked, and ask again when a turn ends.

import { api } from "../api/http";
import type { GitStatus } from "../api/types";
import { Store } from "../lib/store";

/** workspace id -> current branch ("detached HEAD" when none), null when it is not a git checkout. */
export const branches = new Store<Readonly<Record<string, string | null>>>({});

/** Workspaces with a request in flight; true: asked again meanwhile, so ask once more after it
 *  (an answer that started before the agent switched branches must not be the last word). */
const asking = new Map<string, boolean>();

/** Ask git for the workspace's current branch (one request at a time per workspace). */
export async function refreshBranch(workspaceId: string): Promise<void> {
  if (asking.has(workspaceId)) {
    asking.set(workspaceId, true);
    return;
  }
  asking.set(workspaceId, false);
  try {
    const st = await api<GitStatus>("GET", `/api/workspaces/${encodeURIComponent(workspaceId)}/git/status`);
    noteBranch(workspaceId, st);
  } catch {
    // Unreachable host, a checkout gone: keep showing what the record says.
  } finally {
    const again = asking.get(workspaceId) === true;
    asking.delete(workspaceId);
    if (again) void refreshBranch(workspaceId);
  }
}

/** Record what a git status answer says (the review pane reads it too). */
export function noteBranch(workspaceId: string, st: GitStatus): void {
  const value = st.isGit ? (st.branch ?? "detached HEAD") : null;
  if (branches.get()[workspaceId] === value) return;
  branches.set((all) => ({ ...all, [workspaceId]: value }));
}

/** The branch to show: git's answer when there is one, else the workspace record's. */
export function shownBranch(all: Readonly<Record<string, string | null>>, id: string, recorded: string | null): string | null {
  return id in all ? (all[id] ?? null) : recorded;
}
