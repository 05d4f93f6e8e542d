// Model and thinking-level helpers shared by the pickers, keybinds and the palette.

import type { ModelEntry, ModelsInfo } from "../api/types";

export const THINKING_LEVELS = ["off", "low", "medium", "high", "xhigh", "max"] as const;
/** The engine's default when a workspace has no level of its own. */
export const DEFAULT_THINKING = "medium";

/** The workspace's model, or the server's default when it has none. */
export function effectiveModel(info: ModelsInfo | null, model: string | null): string | null {
  return model ?? info?.defaultModel ?? null;
}

/** Resolve an alias (`opus`) to its `provider:model` string when the server lists it. */
export function resolveModel(info: ModelsInfo | null, model: string | null): string | null {
  const m = effectiveModel(info, model);
  return m === null ? null : (info?.aliases[m] ?? m);
}

export function modelEntry(info: ModelsInfo | null, model: string | null): ModelEntry | null {
  const full = resolveModel(info, model);
  return info?.models.find((m) => m.model === full) ?? null;
}

/** A model's name as the pill and the picker show it. Two providers can serve models with the
 *  same name (`a:model` and `b:model`): then the provider is part of the label, or cycling from
 *  one to the other would look like nothing happened. */
export function entryLabel(info: ModelsInfo | null, entry: ModelEntry): string {
  const name = entry.displayName.trim().toLowerCase();
  const shared = (info?.models ?? []).some(
    (m) => m.model !== entry.model && m.displayName.trim().toLowerCase() === name,
  );
  return shared ? `${entry.displayName} · ${entry.provider}` : entry.displayName;
}

export function modelLabel(info: ModelsInfo | null, model: string | null): string {
  const entry = modelEntry(info, model);
  if (entry) return entryLabel(info, entry);
  return effectiveModel(info, model) ?? "default model";
}

export function thinkingLevels(info: ModelsInfo | null, model: string | null): readonly string[] {
  const levels = modelEntry(info, model)?.thinkingLevels;
  return levels && levels.length > 0 ? levels : THINKING_LEVELS;
}

export function effectiveThinking(level: string | null): string {
  return level ?? DEFAULT_THINKING;
}

/** The next model in the cycle (usable models only, in the server's order). */
export function nextModel(info: ModelsInfo | null, current: string | null): string | null {
  const usable = (info?.models ?? []).filter((m) => m.usable).map((m) => m.model);
  if (usable.length === 0) return null;
  const cur = resolveModel(info, current);
  const i = cur === null ? -1 : usable.indexOf(cur);
  return usable[(i + 1) % usable.length] ?? null;
}

/** Step the thinking level within the model's range, clamped at both ends. */
export function stepThinking(levels: readonly string[], current: string | null, delta: 1 | -1): string {
  const cur = effectiveThinking(current);
  const norm = cur === "med" ? "medium" : cur;
  const i = levels.indexOf(norm);
  if (i < 0) return levels[0] ?? norm;
  return levels[Math.min(levels.length - 1, Math.max(0, i + delta))] ?? norm;
}
