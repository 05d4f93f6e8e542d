import { useState } from "react";
import { errorMessage } from "../../api/http";
import { addProject, closeDialog, openDialog } from "../../state/app";
import { Modal } from "./Modal";

export function AddProjectDialog() {
  const [path, setPath] = useState("");
  const [error, setError] = useState<string | null>(null);
  const [busy, setBusy] = useState(false);
  const submit = async () => {
    if (!path.trim()) return;
    setBusy(true);
    setError(null);
    try {
      const project = await addProject(path.trim());
      openDialog({ kind: "new-workspace", projectPath: project.path });
    } catch (exc) {
      setError(errorMessage(exc));
    } finally {
      setBusy(false);
    }
  };
  return (
    <Modal
      title="Add project"
      onClose={closeDialog}
      footer={
        <>
          <button type="button" className="btn" onClick={closeDialog}>
            Cancel
          </button>
          <button type="submit" form="add-project" className="btn btn-primary" disabled={busy || !path.trim()}>
            Add
          </button>
        </>
      }
    >
      <form
        id="add-project"
        onSubmit={(e) => {
          e.preventDefault();
          void submit();
        }}
      >
        <label className="field">
          <span>Directory on the server's machine (its git toplevel becomes the project)</span>
          <input className="input" value={path} onChange={(e) => setPath(e.target.value)} placeholder="/home/me/src/repo" aria-label="Project directory" data-autofocus />
        </label>
        {error ? <div className="form-error" role="alert">{error}</div> : null}
      </form>
    </Modal>
  );
}
