// Scratch chats (docs/workspaces.md): a chat with no project, in a private folder the server
// manages. A new one starts as a draft on screen; the server makes the chat (and its folder)
// only when the first message is sent, so closing an empty draft leaves nothing behind.

import { api } from "../api/http";
import type { Workspace } from "../api/types";
import { app, selectWorkspace } from "./app";
import { sendMessage } from "./actions";

/** Show the draft of a new scratch chat (the sidebar's Chats +, the palette, the shortcut). */
export function openScratchDraft(): void {
  selectWorkspace(null);
  app.update({ scratchDraft: true, paletteOpen: false, dialog: { kind: "none" } });
}

/** Make the chat, open it, and send its first message. */
export async function startScratchChat(text: string): Promise<Workspace> {
  const ws = await api<Workspace>("POST", "/api/chats", {});
  app.set((s) => ({
    ...s,
    workspaces: [ws, ...s.workspaces.filter((w) => w.id !== ws.id)],
    statuses: { ...s.statuses, [ws.id]: ws.status },
  }));
  selectWorkspace(ws.id);
  await sendMessage(ws.id, text, "step");
  return ws;
}
