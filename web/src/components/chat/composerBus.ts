// Other parts of the UI (the palette's slash mode, "edit and resend") put text into the composer
// of a workspace; the composer owns its text and listens here.

type Listener = (workspaceId: string, text: string, mode: "replace" | "insert") => void;

const listeners = new Set<Listener>();

export function onComposerText(listener: Listener): () => void {
  listeners.add(listener);
  return () => listeners.delete(listener);
}

export function setComposerText(workspaceId: string, text: string): void {
  for (const l of listeners) l(workspaceId, text, "replace");
}

export function insertComposerText(workspaceId: string, text: string): void {
  for (const l of listeners) l(workspaceId, text, "insert");
}

export function focusComposer(): void {
  const el = document.querySelector<HTMLTextAreaElement>("textarea[data-composer]");
  el?.focus();
}
