// How full the workspace's context is, with the auto-compaction threshold: the Costs tab's
// Context bar (drag the marker, or focus it and use the arrow keys, to set the threshold of the
// workspace's model) and the composer's "Auto-Compact in N% usage" hint (docs/compaction.md).

import { useEffect, useRef, useState } from "react";
import { api, errorMessage } from "../api/http";
import type { ContextUsage } from "../api/types";
import { formatTokens } from "../lib/format";
import { useStore } from "../lib/store";
import { activity, activityOf } from "../state/activity";
import { app } from "../state/app";

/** The hint shows this many points before the threshold. */
const HINT_WINDOW = 15;
const MAX_ENABLED = 90;
const OFF = 100;

/** A requested marker position as the server applies it: 100 is off, 91-99 are 90. */
export function snapThreshold(percent: number): number {
  const value = Math.round(percent);
  if (value >= 95) return OFF;
  return Math.max(1, Math.min(MAX_ENABLED, value));
}

/** The context of a workspace, fetched again whenever a turn ends anywhere and each time the
 * workspace commits a row that changes its context (so it follows a running turn step by step). */
export function useContextUsage(workspaceId: string, refresh = 0): ContextUsage | null {
  const allowed = useStore(app, (s) => s.caps.context);
  const epoch = useStore(app, (s) => s.turnEpoch);
  const rows = useStore(activity, (all) => activityOf(all, workspaceId).contextRows);
  const [usage, setUsage] = useState<ContextUsage | null>(null);
  useEffect(() => {
    if (!allowed) return;
    let live = true;
    api<ContextUsage>("GET", `/api/workspaces/${encodeURIComponent(workspaceId)}/context`)
      .then((u) => live && setUsage(u))
      .catch(() => live && setUsage(null));
    return () => {
      live = false;
    };
  }, [workspaceId, epoch, rows, refresh, allowed]);
  return usage;
}

function percentOf(usage: ContextUsage): number | null {
  if (usage.tokens === null || !usage.window) return null;
  return Math.min(100, (100 * usage.tokens) / usage.window);
}

/** The composer's hint as usage nears (or passes) the threshold. */
export function AutoCompactHint(props: { workspaceId: string }) {
  const usage = useContextUsage(props.workspaceId);
  if (!usage?.autoCompact) return null;
  const percent = percentOf(usage);
  if (percent === null) return null;
  const left = usage.threshold - percent;
  if (left > HINT_WINDOW) return null;
  return (
    <div className="autocompact-hint" role="status">
      {left > 0
        ? `Auto-Compact in ${Math.max(1, Math.round(left))}% usage`
        : "The context is past its auto-compaction threshold: the next message is sent after a compaction"}
    </div>
  );
}

/** The Context bar with its draggable threshold marker. */
export function ContextBar(props: { workspaceId: string }) {
  const [refresh, setRefresh] = useState(0);
  const usage = useContextUsage(props.workspaceId, refresh);
  const canSet = useStore(app, (s) => s.caps.threshold);
  const [dragging, setDragging] = useState<number | null>(null);
  const [error, setError] = useState<string | null>(null);
  const bar = useRef<HTMLDivElement>(null);
  if (!usage) return null;
  const percent = percentOf(usage);
  const threshold = dragging ?? usage.threshold;
  const model = usage.model;

  const save = (value: number) => {
    if (!model) return;
    api("PUT", "/api/settings/auto-compaction", { model, threshold: snapThreshold(value) })
      .then(() => {
        setError(null);
        setRefresh((r) => r + 1);
      })
      .catch((exc: unknown) => setError(errorMessage(exc)))
      .finally(() => setDragging(null));
  };
  const at = (clientX: number): number => {
    const rect = bar.current?.getBoundingClientRect();
    if (!rect || rect.width === 0) return threshold;
    return snapThreshold(((clientX - rect.left) / rect.width) * 100);
  };

  return (
    <div className="context-bar" data-testid="context-bar">
      <div className="counter-nums">
        {usage.tokens === null ? "No messages in this context yet" : `${usage.estimated ? "about " : ""}${formatTokens(usage.tokens)}`}
        {usage.window ? ` of ${formatTokens(usage.window)}${percent !== null ? ` (${Math.round(percent)}%)` : ""}` : ""}
      </div>
      {usage.window ? (
        <div
          className="meter threshold-meter"
          ref={bar}
          onPointerDown={(e) => {
            if (!canSet) return;
            e.currentTarget.setPointerCapture(e.pointerId);
            setDragging(at(e.clientX));
          }}
          onPointerMove={(e) => {
            if (dragging !== null) setDragging(at(e.clientX));
          }}
          onPointerUp={(e) => {
            if (dragging !== null) save(at(e.clientX));
          }}
        >
          <div className="fill" style={{ width: `${Math.round(percent ?? 0)}%` }} />
          <div
            className={`threshold-marker ${threshold >= OFF ? "off" : ""}`}
            role="slider"
            tabIndex={canSet ? 0 : -1}
            aria-label="Auto-compaction threshold"
            aria-valuemin={1}
            aria-valuemax={100}
            aria-valuenow={threshold}
            aria-valuetext={threshold >= OFF ? "off" : `${threshold}%`}
            aria-disabled={!canSet}
            style={{ left: `${threshold}%` }}
            onKeyDown={(e) => {
              if (!canSet) return;
              const step = e.key === "ArrowRight" || e.key === "ArrowUp" ? 1 : e.key === "ArrowLeft" || e.key === "ArrowDown" ? -1 : 0;
              if (step === 0) return;
              e.preventDefault();
              // From 90 one more step right turns it off; from off one step left is 90.
              const next = threshold >= OFF ? (step < 0 ? MAX_ENABLED : OFF) : threshold === MAX_ENABLED && step > 0 ? OFF : threshold + step;
              setDragging(next);
              save(next);
            }}
          />
        </div>
      ) : null}
      <div className="faint" data-testid="auto-compact-label">
        {!usage.window
          ? "Auto-compaction needs a known context window for this model (config.json contextWindows)."
          : threshold >= OFF
            ? "Auto-compaction is off for this model (drag the marker left to turn it on)."
            : `Auto-compacts at ${threshold}% for ${model ?? "this model"}.`}
        {usage.idleHours !== null ? ` Idle compaction after ${usage.idleHours} h (/idle).` : ""}
      </div>
      {error ? <div className="form-error">{error}</div> : null}
    </div>
  );
}
