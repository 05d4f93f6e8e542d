// Rename a workspace (POST .../rename): the record, its worktree directory and its branch move.

import { useState } from "react";
import { errorMessage } from "../../api/http";
import { useStore } from "../../lib/store";
import { app, closeDialog, renameWorkspace } from "../../state/app";
import { Modal } from "./Modal";

export function RenameDialog(props: { workspaceId: string }) {
  const ws = useStore(app, (s) => s.workspaces.find((w) => w.id === props.workspaceId));
  const [name, setName] = useState(ws?.name ?? "");
  const [error, setError] = useState<string | null>(null);
  const [busy, setBusy] = useState(false);
  const submit = async () => {
    const value = name.trim();
    if (!value) {
      setError("Enter a name.");
      return;
    }
    setBusy(true);
    setError(null);
    try {
      await renameWorkspace(props.workspaceId, value);
      closeDialog();
    } catch (exc) {
      setError(errorMessage(exc));
    } finally {
      setBusy(false);
    }
  };
  return (
    <Modal
      title="Rename workspace"
      onClose={closeDialog}
      footer={
        <>
          <button type="button" className="btn" onClick={closeDialog}>
            Cancel
          </button>
          <button type="submit" form="rename-ws" className="btn btn-primary" disabled={busy || !name.trim()}>
            Rename
          </button>
        </>
      }
    >
      <form
        id="rename-ws"
        onSubmit={(e) => {
          e.preventDefault();
          void submit();
        }}
      >
        <p className="muted" style={{ marginTop: 0 }}>
          The workspace's worktree directory and its branch (when it carries the workspace's name) are renamed too.
          A workspace cannot be renamed while a turn runs in it.
        </p>
        <label className="field">
          <span>Name</span>
          <input
            className="input"
            value={name}
            onChange={(e) => setName(e.target.value)}
            aria-label="Workspace name"
            maxLength={80}
            data-autofocus
          />
        </label>
        {error ? <div className="form-error" role="alert">{error}</div> : null}
      </form>
    </Modal>
  );
}
