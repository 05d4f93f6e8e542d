import { useState } from "react";
import { openDialog } from "../../state/app";
import { addProject } from "../../state/actions";
import { FormDialog } from "./FormDialog";

export function AddProjectDialog() {
  const [path, setPath] = useState("");
  return (
    <FormDialog
      title="Add project"
      formId="add-project"
      submitLabel="Add"
      canSubmit={Boolean(path.trim())}
      onSubmit={async () => {
        const project = await addProject(path.trim());
        openDialog({ kind: "new-workspace", projectPath: project.path });
      }}
    >
      <label className="field">
        <span>Directory on the server's machine (its git toplevel becomes the project)</span>
        <input
          className="input"
          value={path}
          onChange={(e) => setPath(e.target.value)}
          placeholder="/home/me/src/repo"
          aria-label="Project directory"
          data-autofocus
        />
      </label>
    </FormDialog>
  );
}
