// Settings → Models: the rules for a typed model id and the suggestion list's keyboard logic.
// The server checks ids the same way (xum.llm.discovery.model_id_problem); checking here too
// lets the form say what is wrong before it sends anything.

import type { CatalogModel } from "../api/types";

export const MODEL_ID_MAX = 200;
/** Suggestions shown at once; typing narrows the rest down. */
export const SUGGESTIONS_SHOWN = 50;

/** Why `id` (already trimmed) cannot be added, or null when it can. */
export function modelIdProblem(id: string): string | null {
  if (id === "") return "Type a model ID first.";
  if (id.length > MODEL_ID_MAX) return `A model ID has at most ${MODEL_ID_MAX} characters.`;
  if (/\s/.test(id)) return "A model ID cannot contain spaces.";
  if (/[\u0000-\u001f\u007f]/.test(id)) return "A model ID cannot contain control characters.";
  return null;
}

/** The suggestions matching `query` (case-insensitive, in the id or the name), ids that start
 * with it first, without the ids already configured; at most `limit`. */
export function filterSuggestions(
  models: readonly CatalogModel[],
  query: string,
  configured: readonly string[],
  limit: number = SUGGESTIONS_SHOWN,
): CatalogModel[] {
  const q = query.trim().toLowerCase();
  const skip = new Set(configured);
  const starts: CatalogModel[] = [];
  const contains: CatalogModel[] = [];
  for (const m of models) {
    if (skip.has(m.id)) continue;
    const id = m.id.toLowerCase();
    if (q === "" || id.startsWith(q)) starts.push(m);
    else if (id.includes(q) || (m.displayName ?? "").toLowerCase().includes(q)) contains.push(m);
  }
  return [...starts, ...contains].slice(0, limit);
}

/** Move the highlighted suggestion; -1 means none (Enter then adds what was typed). */
export function stepActive(active: number, delta: 1 | -1, length: number): number {
  if (length === 0) return -1;
  if (delta === 1) return Math.min(active + 1, length - 1);
  return Math.max(active - 1, -1);
}

/** What Enter (or Add) adds: the highlighted suggestion, else the typed id, trimmed. */
export function chosenId(active: number, shown: readonly CatalogModel[], typed: string): string {
  const pick = active >= 0 ? shown[active] : undefined;
  return pick ? pick.id : typed.trim();
}
