// "Jump to bottom" from the global keybind reaches the visible transcript through here.

const listeners = new Set<() => void>();

export function onJumpToBottom(listener: () => void): () => void {
  listeners.add(listener);
  return () => listeners.delete(listener);
}

export function jumpToBottom(): void {
  for (const l of listeners) l();
}
