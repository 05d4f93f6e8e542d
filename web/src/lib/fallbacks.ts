// Model Fallbacks rows as the settings form edits them: one chain per row, its fallbacks typed
// as a comma-separated list (docs/models.md, Refusal fallbacks).

import type { FallbackChain } from "../api/types";

export interface ChainRow {
  model: string;
  /** The fallbacks as typed: model strings or aliases separated by commas. */
  fallbacks: string;
}

export function toRows(chains: readonly FallbackChain[]): ChainRow[] {
  return chains.map((c) => ({ model: c.model, fallbacks: c.models.join(", ") }));
}

/** The chains to send: blank rows left out, each fallback trimmed, empty entries dropped. */
export function toChains(rows: readonly ChainRow[]): FallbackChain[] {
  return rows
    .filter((r) => r.model.trim() !== "")
    .map((r) => ({
      model: r.model.trim(),
      models: r.fallbacks
        .split(",")
        .map((m) => m.trim())
        .filter((m) => m !== ""),
    }));
}
