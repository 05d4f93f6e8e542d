// Desktop notifications through the browser's Notification API (docs/notifications.md).
//
// The server decides what notifies (the agent's `notify` tool, "Notify on all responses",
// the inbox kinds configured in config.json) and sends each as a `notification` message to the
// clients that asked (`notifications-subscribe`); this page shows them. Permission is asked at
// most once (remembered in localStorage, so a dismissed prompt is not shown again on every
// reload): when the bell is first turned on, or when the first notification arrives. Clicking a
// notification focuses this window and opens the workspace that sent it.

import type { NotificationNotice, Workspace } from "../api/types";
import { Store } from "../lib/store";

const ASKED_KEY = "xum.notifications.asked";

export type Permission = "granted" | "denied" | "default" | "unsupported";

export const notificationPermission = new Store<{ permission: Permission }>({ permission: current() });

function current(): Permission {
  if (typeof window === "undefined" || typeof window.Notification === "undefined") return "unsupported";
  return window.Notification.permission;
}

function alreadyAsked(): boolean {
  try {
    return window.localStorage.getItem(ASKED_KEY) === "1";
  } catch {
    return false;
  }
}

function rememberAsked(): void {
  try {
    window.localStorage.setItem(ASKED_KEY, "1");
  } catch {
    // private mode: asked once for this page instead
  }
}

let askedHere = false;

/** Whether notifications may be shown, asking for permission the first time it matters. */
export async function ensurePermission(): Promise<boolean> {
  const now = current();
  notificationPermission.set(() => ({ permission: now }));
  if (now === "granted") return true;
  if (now !== "default" || askedHere || alreadyAsked()) return false;
  askedHere = true;
  rememberAsked();
  let answer: Permission = "default";
  try {
    answer = await window.Notification.requestPermission();
  } catch {
    answer = current();
  }
  notificationPermission.set(() => ({ permission: answer }));
  return answer === "granted";
}

/** What a notification says under its title: the workspace, then the body. */
export function noticeBody(notice: NotificationNotice): string {
  const where = notice.workspaceName || notice.workspaceId;
  return notice.body ? `${where}: ${notice.body}` : where;
}

/** Show one notification; clicking it focuses the window and calls `open` with its workspace. */
export async function showNotice(notice: NotificationNotice, open: (workspaceId: string) => void): Promise<void> {
  if (!(await ensurePermission())) return;
  const shown = new window.Notification(notice.title, {
    body: noticeBody(notice),
    tag: notice.id,
    data: { workspaceId: notice.workspaceId },
  });
  shown.onclick = () => {
    window.focus();
    open(notice.workspaceId);
    shown.close();
  };
}

/** Whether the workspace's "Notify on all responses" is on. */
export function notifiesOnResponse(ws: Workspace | null | undefined): boolean {
  return Boolean(ws?.notifyOnResponse);
}
