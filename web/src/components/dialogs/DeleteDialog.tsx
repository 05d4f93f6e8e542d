// Deleting a workspace says exactly what will be removed, from the server's preview.

import { useEffect, useState } from "react";
import { api, errorMessage } from "../../api/http";
import type { DeletionItem, DeletionPreview } from "../../api/types";
import { useStore } from "../../lib/store";
import { app, closeDialog } from "../../state/app";
import { deleteWorkspace } from "../../state/actions";
import { Modal } from "./Modal";
import { FormError } from "../FormParts";

const KIND_LABELS: Record<string, string> = {
  "session-log": "Conversation history",
  "scratch-dir": "Scratch directory",
  worktree: "Git worktree (its files)",
  branch: "Git branch",
  record: "Workspace record",
  "chat-folder": "Chat folder (its files)",
};

function describe(item: DeletionItem): string {
  return item.path ?? item.name ?? item.detail ?? "";
}

export function DeleteDialog(props: { workspaceId: string }) {
  const ws = useStore(app, (s) => s.workspaces.find((w) => w.id === props.workspaceId));
  const [preview, setPreview] = useState<DeletionPreview | null>(null);
  const [error, setError] = useState<string | null>(null);
  const [busy, setBusy] = useState(false);
  const [confirmed, setConfirmed] = useState(false);

  useEffect(() => {
    api<DeletionPreview>("GET", `/api/workspaces/${encodeURIComponent(props.workspaceId)}/deletion`)
      .then(setPreview)
      .catch((exc: unknown) => setError(errorMessage(exc)));
  }, [props.workspaceId]);

  const warnings = preview?.warnings ?? [];
  const submit = async () => {
    setBusy(true);
    setError(null);
    try {
      await deleteWorkspace(props.workspaceId, warnings.length > 0);
      closeDialog();
    } catch (exc) {
      setError(errorMessage(exc));
    } finally {
      setBusy(false);
    }
  };

  return (
    <Modal
      title={`Delete ${ws?.title || ws?.name || "workspace"}?`}
      onClose={closeDialog}
      footer={
        <>
          <button type="button" className="btn" onClick={closeDialog} data-autofocus>
            Cancel
          </button>
          <button
            type="button"
            className="btn btn-danger"
            disabled={busy || preview === null || (warnings.length > 0 && !confirmed)}
            onClick={() => void submit()}
          >
            Delete
          </button>
        </>
      }
    >
      {preview === null && error === null ? <div className="muted">Checking what would be removed…</div> : null}
      {preview ? (
        <>
          <p style={{ marginTop: 0 }}>This permanently removes:</p>
          <ul className="removes" aria-label="What will be removed">
            {preview.removes.map((item, i) => (
              <li key={i}>
                {KIND_LABELS[item.kind] ?? item.kind}
                {describe(item) ? (
                  <>
                    : <code>{describe(item)}</code>
                  </>
                ) : null}
                {item.detail && item.detail !== describe(item) ? <span className="muted"> ({item.detail})</span> : null}
              </li>
            ))}
          </ul>
          {warnings.length > 0 ? (
            <div className="warn-box" role="alert">
              {warnings.map((w, i) => (
                <div key={i}>{w}</div>
              ))}
              <label style={{ display: "flex", gap: 8, marginTop: 8 }}>
                <input type="checkbox" checked={confirmed} onChange={(e) => setConfirmed(e.target.checked)} />
                Delete anyway
              </label>
            </div>
          ) : null}
        </>
      ) : null}
      <FormError message={error} />
    </Modal>
  );
}
