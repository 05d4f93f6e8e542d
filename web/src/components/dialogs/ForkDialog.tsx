import { useState } from "react";
import { errorMessage } from "../../api/http";
import { useStore } from "../../lib/store";
import { app, closeDialog, forkWorkspace } from "../../state/app";
import { Modal } from "./Modal";

export function ForkDialog(props: { workspaceId: string }) {
  const ws = useStore(app, (s) => s.workspaces.find((w) => w.id === props.workspaceId));
  const [name, setName] = useState("");
  const [error, setError] = useState<string | null>(null);
  const [busy, setBusy] = useState(false);
  const submit = async () => {
    setBusy(true);
    setError(null);
    try {
      await forkWorkspace(props.workspaceId, name.trim() || undefined);
      closeDialog();
    } catch (exc) {
      setError(errorMessage(exc));
    } finally {
      setBusy(false);
    }
  };
  return (
    <Modal
      title={`Fork ${ws?.title || ws?.name || "workspace"}`}
      onClose={closeDialog}
      footer={
        <>
          <button type="button" className="btn" onClick={closeDialog}>
            Cancel
          </button>
          <button type="submit" form="fork-ws" className="btn btn-primary" disabled={busy}>
            Fork
          </button>
        </>
      }
    >
      <form
        id="fork-ws"
        onSubmit={(e) => {
          e.preventDefault();
          void submit();
        }}
      >
        <p className="muted" style={{ marginTop: 0 }}>
          The fork copies the conversation, model, thinking level and mode, on a new branch from this workspace's
          HEAD. Uncommitted changes are not copied.
        </p>
        <label className="field">
          <span>New workspace name (optional)</span>
          <input className="input" value={name} onChange={(e) => setName(e.target.value)} aria-label="Fork name" data-autofocus />
        </label>
        {error ? <div className="form-error" role="alert">{error}</div> : null}
      </form>
    </Modal>
  );
}
