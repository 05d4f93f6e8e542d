// Context boundaries in the transcript: the compaction card (its summary, collapsed), the
// "compacting" state while a summarization runs, and the Start Here button.

import { Archive, Loader2, Target } from "lucide-react";
import { memo, useState } from "react";
import { api, errorMessage } from "../../api/http";
import { useStore } from "../../lib/store";
import { app } from "../../state/app";
import type { CompactionRow } from "../../state/transcript";
import { Markdown } from "../markdown/Markdown";
import { jumpToBottom } from "./scrollBus";

const TRIGGERS: Record<string, string> = {
  manual: "Compacted",
  auto: "Compacted automatically (the context reached its threshold)",
  force: "Compacted automatically mid-turn",
  idle: "Compacted while idle",
  start_here: "Started here",
};

/** A compaction boundary: the model sees the summary below from here on. */
export const CompactionCard = memo(function CompactionCard(props: { row: CompactionRow }) {
  const { row } = props;
  const title = TRIGGERS[row.trigger] ?? "Compacted";
  return (
    <details className="compaction-card" data-trigger={row.trigger}>
      <summary>
        <Archive size={14} aria-hidden />
        <span className="compaction-title">{title}</span>
        <span className="faint">
          {row.trigger === "start_here" ? "the context is this message" : "the context is this summary"}
          {row.model ? ` · ${row.model}` : ""}
        </span>
      </summary>
      <div className="compaction-body">
        <Markdown text={row.summary} />
      </div>
    </details>
  );
});

/** Shown in place of the streaming reply while a summarization pass runs. */
export function Compacting(props: { trigger: string }) {
  const why = props.trigger === "manual" ? "" : props.trigger === "idle" ? " (idle)" : " (automatic)";
  return (
    <div className="working compacting" role="status">
      <Loader2 size={14} className="spin" aria-hidden /> Compacting the conversation{why}…
    </div>
  );
}

/** "Start Here": the reply or plan at `seq` becomes the whole context (instant, free). */
export function StartHere(props: { workspaceId: string; seq: number; disabled?: boolean }) {
  const allowed = useStore(app, (s) => s.caps.startHere);
  const streaming = useStore(app, (s) => s.statuses[props.workspaceId]?.state === "streaming");
  const [error, setError] = useState<string | null>(null);
  const [busy, setBusy] = useState(false);
  if (!allowed) return null;
  const go = () => {
    setBusy(true);
    api("POST", `/api/workspaces/${encodeURIComponent(props.workspaceId)}/start-here`, { seq: props.seq })
      .then(() => {
        setError(null);
        // The new boundary is appended at the end: follow it there, wherever the user had
        // scrolled to find the reply.
        jumpToBottom();
      })
      .catch((exc: unknown) => setError(errorMessage(exc)))
      .finally(() => setBusy(false));
  };
  return (
    <span className="start-here">
      <button
        type="button"
        className="btn btn-small"
        onClick={go}
        disabled={busy || streaming || props.disabled}
        title="Make this the whole context of the conversation from now on"
      >
        <Target size={13} aria-hidden /> Start Here
      </button>
      {error ? <span className="form-error">{error}</span> : null}
    </span>
  );
}
