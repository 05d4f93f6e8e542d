// A proposed plan: rendered Markdown, copy, a raw-text toggle, Start Here (the plan becomes the
// whole context) when its result is on record, and on the newest plan Edit (the plan file, in
// place) and Implement (switch to Exec and ask for the plan to be carried out).

import { ClipboardList, Hammer, Pencil } from "lucide-react";
import { useState } from "react";
import { api, errorMessage } from "../../api/http";
import type { PlanFile } from "../../api/types";
import { useStore } from "../../lib/store";
import { patchWorkspace, sendMessage } from "../../state/actions";
import { app } from "../../state/app";
import { StartHere } from "../chat/Compaction";
import { CopyButton } from "../CopyButton";
import { FormError } from "../FormParts";
import { Markdown } from "../markdown/Markdown";

/** What Implement sends (the terminal UI's Ctrl+G sends the same). */
export function implementText(path: string | null | undefined): string {
  return `The plan${path ? ` in ${path}` : ""} is approved. Carry it out now, step by step.`;
}

interface Actions {
  workspaceId: string;
  /** A turn is open (the plan's own, or a later one): Implement waits for it. */
  busy: boolean;
}

function PlanEditor(props: { workspaceId: string; file: PlanFile; onDone: (saved: string | null) => void }) {
  const [text, setText] = useState(props.file.content);
  const [saving, setSaving] = useState(false);
  const [error, setError] = useState<string | null>(null);
  const save = () => {
    setSaving(true);
    api<PlanFile>("PUT", `/api/workspaces/${encodeURIComponent(props.workspaceId)}/plan`, {
      content: text,
      expectedSha256: props.file.sha256,
    })
      .then((saved) => props.onDone(saved.content))
      .catch((exc: unknown) => {
        setError(errorMessage(exc));
        setSaving(false);
      });
  };
  return (
    <div className="plan-editor">
      <textarea
        className="input plan-editor-text"
        aria-label="Plan text"
        value={text}
        onChange={(e) => setText(e.target.value)}
        rows={Math.min(24, Math.max(6, text.split("\n").length + 1))}
        autoFocus
      />
      <div className="plan-editor-actions">
        <span className="faint">{props.file.path}</span>
        <button type="button" className="btn" onClick={() => props.onDone(null)} disabled={saving}>
          Cancel
        </button>
        <button type="button" className="btn primary" onClick={save} disabled={saving}>
          Save plan
        </button>
      </div>
      <FormError message={error} />
    </div>
  );
}

export function PlanCard(props: {
  plan: string;
  path?: string | null;
  startHere?: { workspaceId: string; seq: number } | null;
  /** Set on the newest plan of the workspace: Edit and Implement. */
  actions?: Actions | null;
}) {
  const [raw, setRaw] = useState(false);
  const [editing, setEditing] = useState<PlanFile | null>(null);
  const [saved, setSaved] = useState<string | null>(null);
  const [error, setError] = useState<string | null>(null);
  const [starting, setStarting] = useState(false);
  const canEdit = useStore(app, (s) => s.caps.plan);
  const streaming = useStore(app, (s) =>
    props.actions ? s.statuses[props.actions.workspaceId]?.state === "streaming" : false,
  );
  const actions = props.actions ?? null;
  const shown = saved ?? props.plan;

  const edit = () => {
    if (!actions) return;
    setError(null);
    api<PlanFile>("GET", `/api/workspaces/${encodeURIComponent(actions.workspaceId)}/plan`)
      .then(setEditing)
      .catch((exc: unknown) => setError(errorMessage(exc)));
  };
  const implement = () => {
    if (!actions) return;
    setStarting(true);
    setError(null);
    patchWorkspace(actions.workspaceId, { agent: "exec" })
      .then(() => sendMessage(actions.workspaceId, implementText(props.path), "step"))
      .catch((exc: unknown) => setError(errorMessage(exc)))
      .finally(() => setStarting(false));
  };

  return (
    <div className="plan-card">
      <div className="plan-head">
        <ClipboardList size={16} aria-hidden color="var(--color-plan-mode)" />
        <span className="plan-title">Plan</span>
        {/* The end of a long path matters most: it is cut at the start. */}
        <span className="plan-path">
          <bdi>{props.path ?? ""}</bdi>
        </span>
        <button type="button" className="btn" onClick={() => setRaw((r) => !r)} aria-pressed={raw}>
          {raw ? "Show Markdown" : "Show Text"}
        </button>
        <CopyButton text={shown} label="Copy plan" />
        {actions && canEdit && !editing ? (
          <button type="button" className="btn" onClick={edit} disabled={streaming}>
            <Pencil size={13} aria-hidden /> Edit
          </button>
        ) : null}
        {props.startHere ? <StartHere workspaceId={props.startHere.workspaceId} seq={props.startHere.seq} /> : null}
        {actions ? (
          <button
            type="button"
            className="btn primary"
            onClick={implement}
            disabled={starting || actions.busy || streaming}
            title="Switch to Exec and ask the agent to carry out this plan"
          >
            <Hammer size={13} aria-hidden /> Implement
          </button>
        ) : null}
      </div>
      <FormError message={error} />
      {editing && actions ? (
        <PlanEditor
          workspaceId={actions.workspaceId}
          file={editing}
          onDone={(text) => {
            if (text !== null) setSaved(text);
            setEditing(null);
          }}
        />
      ) : (
        <div className="plan-body">
          {raw ? <pre className="pre-text">{shown}</pre> : <Markdown text={shown} />}
          {saved !== null ? (
            <div className="faint plan-saved" role="status">
              Saved to the plan file. The agent sees the change with your next message.
            </div>
          ) : null}
        </div>
      )}
    </div>
  );
}
