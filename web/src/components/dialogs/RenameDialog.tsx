// Rename a workspace (POST .../rename): the record, its worktree directory and its branch move.

import { useState } from "react";
import { useStore } from "../../lib/store";
import { app, closeDialog } from "../../state/app";
import { renameWorkspace } from "../../state/actions";
import { FormDialog } from "./FormDialog";

export function RenameDialog(props: { workspaceId: string }) {
  const ws = useStore(app, (s) => s.workspaces.find((w) => w.id === props.workspaceId));
  const [name, setName] = useState(ws?.name ?? "");
  return (
    <FormDialog
      title="Rename workspace"
      formId="rename-ws"
      submitLabel="Rename"
      canSubmit={Boolean(name.trim())}
      onSubmit={async () => {
        await renameWorkspace(props.workspaceId, name.trim());
        closeDialog();
      }}
    >
      <p className="muted" style={{ marginTop: 0 }}>
        The workspace's worktree directory and its branch (when it carries the workspace's name) are renamed too. A
        workspace cannot be renamed while a turn runs in it.
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
    </FormDialog>
  );
}
